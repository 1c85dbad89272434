// Package runkit is the toolkit of the programs that run a learner's own
// controller for `lab start LAB --mine`. lab compiles a lab's runner (a
// small main package) inside the learner's module together with this
// package and the observation layer; the program then runs the learner's
// reconciler under a manager and speaks a line protocol with lab:
//
//   - stdout: the observation events, as JSON Lines (lab's observe package),
//     among them a runner.ready event once the controller runs, naming the
//     switch of the simulated world with its values;
//   - stdin: commands, one per line: "pause", "resume", "step",
//     "set NAME=VALUE"; end of input stops the program;
//   - stderr: anything the learner's code prints, to stdout or stderr.
//
// It is compiled here too, so it never rots.
package runkit

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/operator-lab/lab/observe"
)

// Switch is the one setting of the simulated world the learner can flip
// from the live view (say, whether the external system is up).
type Switch struct {
	Name string
	// Values are the settings, the first being the initial one.
	Values []string
	// Set applies a value; it is only called with one of Values.
	Set func(value string)
}

// Setting holds the current value of a runner's switch; the simulated
// world reads it on every call while lab's commands change it.
type Setting struct {
	mu    sync.Mutex
	value string
}

// Set changes the value.
func (s *Setting) Set(value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.value = value
}

// Get returns the value.
func (s *Setting) Get() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.value
}

// Program is what a lab's runner provides.
type Program struct {
	// AddToScheme adds the lab's types; client-go's are always there.
	AddToScheme func(*runtime.Scheme) error
	Switch      Switch
	// Setup registers the learner's controller on mgr through k.
	Setup func(mgr ctrl.Manager, k *Kit) error
}

// Kit is what Setup wraps the learner's code with so lab sees it work.
type Kit struct {
	// Emitter receives events (the simulated world's, for example).
	Emitter observe.Emitter
	gate    *observe.Gate
	phases  *statusWatch
	// watched are the kinds given to Handler, whose informers must have
	// synced before the program says it is ready.
	watched []client.Object
}

// ControllerOptions are controller options with the observed work queue.
func (k *Kit) ControllerOptions() controller.Options {
	return controller.Options{NewQueue: observe.NewQueue(k.Emitter)}
}

// Reconciler wraps the learner's reconciler: reconcile events, and the
// step-through gate the live view drives.
func (k *Kit) Reconciler(controllerName string, r reconcile.Reconciler) reconcile.Reconciler {
	return observe.Reconciler(k.Emitter, controllerName, k.gate, r)
}

// Handler wraps the event handler of a watch of obj's kind, so each watch
// event is seen and the queue adds it causes point back at it. Use it with
// the builder's Watches(obj, k.Handler(name, obj, h)).
func (k *Kit) Handler(controllerName string, obj client.Object, h handler.EventHandler) handler.EventHandler {
	k.watched = append(k.watched, obj)
	return observe.Handler(k.Emitter, controllerName, "", h)
}

// Client wraps a client: a client event for every call, and phase and
// condition events whenever a status write changes them.
func (k *Kit) Client(c client.Client) client.Client {
	observed := observe.Client(k.Emitter, c)
	// observe.Client is built on interceptor.NewClient, so it can watch.
	return interceptor.NewClient(observed.(client.WithWatch), interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			err := c.SubResource(sub).Update(ctx, obj, opts...)
			if err == nil && sub == "status" {
				k.phases.written(ctx, obj)
			}
			return err
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			err := c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			if err == nil && sub == "status" {
				k.phases.written(ctx, obj)
			}
			return err
		},
	})
}

// Run parses the flags lab passes (-namespace, -kubeconfig, -context),
// starts the manager with the learner's controller and serves the line
// protocol until stdin ends or the manager stops.
func Run(p Program) error {
	flags := flag.NewFlagSet("runner", flag.ContinueOnError)
	namespace := flags.String("namespace", "", "the only namespace the controller watches")
	kubeconfig := flags.String("kubeconfig", "", "kubeconfig of the cluster")
	kubeContext := flags.String("context", "", "kubeconfig context")
	if err := flags.Parse(os.Args[1:]); err != nil {
		return err
	}
	if *namespace == "" {
		return errors.New("-namespace is required")
	}
	cfg, err := restConfig(*kubeconfig, *kubeContext)
	if err != nil {
		return err
	}
	// controller-runtime's own log lines would only interleave with the
	// learner's prints; the events say what happened.
	log.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())

	// Stdout carries the events alone: whatever the learner's code prints
	// goes to stderr, which lab shows when the program fails.
	events := os.Stdout
	os.Stdout = os.Stderr

	bus := observe.NewBus()
	out := bus.Subscribe(observe.DefaultBuffer)
	encoded := make(chan error, 1)
	go func() {
		enc := observe.NewEncoder(events)
		var err error
		for e := range out.C {
			if err == nil {
				err = enc.Encode(e)
			}
		}
		encoded <- err
	}()

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return fmt.Errorf("add client-go types: %w", err)
	}
	if err := p.AddToScheme(scheme); err != nil {
		return fmt.Errorf("add the lab's types: %w", err)
	}
	k := &Kit{Emitter: bus, gate: observe.NewGate(), phases: newStatusWatch(bus)}

	// lab's commands are served from the start, so closing stdin stops the
	// program even before it is ready.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		serveCommands(os.Stdin, k.gate, p.Switch, bus)
		cancel()
	}()

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{*namespace: {}}},
	})
	if err != nil {
		return fmt.Errorf("create the manager: %w", err)
	}
	if err := p.Setup(mgr, k); err != nil {
		return fmt.Errorf("set up your controller: %w", err)
	}
	if v := initial(p.Switch); v != "" {
		p.Switch.Set(v)
	}

	stopped := make(chan error, 1)
	go func() { stopped <- mgr.Start(ctx) }()
	if err := waitForWatches(ctx, mgr, k.watched); err != nil {
		cancel()
		return errors.Join(err, <-stopped)
	}
	// Ready goes on the bus like every event, so it keeps its place in the
	// stream. The bus drops events for a full subscription, but this one is
	// drained all along and holds DefaultBuffer events, while so far the
	// controller has only reported the initial list of its own namespace.
	bus.Emit(observe.RunnerReadyEvent(observe.Switch{Name: p.Switch.Name, Values: p.Switch.Values}, initial(p.Switch)))

	runErr := <-stopped
	bus.Close()
	if err := <-encoded; err != nil && runErr == nil {
		runErr = err
	}
	return runErr
}

// initial is a switch's first value, its setting at start ("" for none).
func initial(sw Switch) string {
	if len(sw.Values) == 0 {
		return ""
	}
	return sw.Values[0]
}

// syncTimeout bounds the wait for the controller's informers: a cluster
// that cannot be listed from must not leave lab waiting without a word.
const syncTimeout = time.Minute

// waitForWatches returns once the informer of every watched kind has
// synced, so "ready" means the controller sees its objects. The
// controller's own start creates these informers; asking for them here
// only waits for the same ones.
func waitForWatches(ctx context.Context, mgr ctrl.Manager, watched []client.Object) error {
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	for _, obj := range watched {
		if _, err := mgr.GetCache().GetInformer(ctx, obj); err != nil {
			return fmt.Errorf("watch %T (is its CRD installed, can the API server be reached?): %w", obj, err)
		}
	}
	return nil
}

// serveCommands applies lab's commands until r ends.
func serveCommands(r io.Reader, gate *observe.Gate, sw Switch, em observe.Emitter) {
	lines := bufio.NewScanner(r)
	for lines.Scan() {
		verb, arg, _ := strings.Cut(strings.TrimSpace(lines.Text()), " ")
		switch verb {
		case "pause":
			gate.Pause()
		case "resume":
			gate.Resume()
		case "step":
			gate.Step()
		case "set":
			name, value, _ := strings.Cut(arg, "=")
			if name == sw.Name && slices.Contains(sw.Values, value) {
				sw.Set(value)
				em.Emit(observe.SwitchEvent(name, value))
			} else {
				fmt.Fprintf(os.Stderr, "runner: no setting %q\n", arg)
			}
		}
	}
}

func restConfig(kubeconfig, kubeContext string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules = &clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: kubeContext}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("load the kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	return cfg, nil
}

// statusWatch turns status writes into phase and condition events, by
// comparing each written status with the last one seen for that object.
type statusWatch struct {
	em   observe.Emitter
	mu   sync.Mutex
	last map[string]writtenStatus
}

type writtenStatus struct {
	phase      string
	conditions []metav1.Condition
}

func newStatusWatch(em observe.Emitter) *statusWatch {
	return &statusWatch{em: em, last: map[string]writtenStatus{}}
}

func (w *statusWatch) written(ctx context.Context, obj client.Object) {
	now := statusOf(obj)
	key := obj.GetNamespace() + "/" + obj.GetName()
	w.mu.Lock()
	before := w.last[key]
	w.last[key] = now
	w.mu.Unlock()
	if now.phase != "" && now.phase != before.phase {
		observe.Emit(ctx, w.em, observe.PhaseEvent(before.phase, now.phase))
	}
	for _, c := range now.conditions {
		old := meta.FindStatusCondition(before.conditions, c.Type)
		if old == nil || old.Status != c.Status || old.Reason != c.Reason || old.Message != c.Message {
			observe.Emit(ctx, w.em, observe.ConditionEvent(c))
		}
	}
}

// statusOf reads status.phase and status.conditions from any object.
func statusOf(obj client.Object) writtenStatus {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return writtenStatus{}
	}
	status, _ := u["status"].(map[string]any)
	var out writtenStatus
	out.phase, _ = status["phase"].(string)
	if raw, ok := status["conditions"].([]any); ok {
		for _, item := range raw {
			m, _ := item.(map[string]any)
			var c metav1.Condition
			if runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c) == nil {
				out.conditions = append(out.conditions, c)
			}
		}
	}
	return out
}
