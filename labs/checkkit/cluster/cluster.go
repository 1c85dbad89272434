// Package cluster is the part of lab's check toolkit that talks to the
// control plane: the REST config the checker provides (KUBECONFIG), clients,
// throw-away namespaces, managers, the observation layer's events, a
// simulated external system, and a recorder of status writes.
package cluster

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/operator-lab/lab/labs/checkkit"
	"github.com/operator-lab/lab/observe"
)

var setLoggerOnce sync.Once

// Config returns the REST config of the control plane the checker started
// (KUBECONFIG), quieting controller-runtime's logger so the learner sees the
// checks' own messages.
func Config(t testing.TB) *rest.Config {
	t.Helper()
	setLoggerOnce.Do(func() {
		// controller-runtime's own logs would bury the checks' messages; what
		// the learner's code did is in the recorded events instead.
		log.SetLogger(logr.Discard())
	})
	path := os.Getenv("KUBECONFIG")
	if path == "" {
		t.Fatal("KUBECONFIG is not set: run the checks with `lab check`, which starts a control plane")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("load kubeconfig %s: %v", path, err)
	}
	cfg.QPS, cfg.Burst = 200, 400 // checks create many objects quickly
	return cfg
}

// Client returns a direct (uncached) client for the checks' own setup and
// inspection.
func Client(t testing.TB, cfg *rest.Config, scheme *runtime.Scheme) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatalf("create client: %v", err)
	}
	return c
}

// Namespace creates a namespace with a random name for one check, labelled
// with the run (checkkit.RunLabels), and, when the check ends, deletes it
// with everything in it (DeleteNamespace): the control plane outlives the
// check. Should the check binary die first, the checker deletes it by its
// run label.
func Namespace(t testing.TB, c client.Client) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: checkkit.Name("check"), Labels: checkkit.RunLabels()}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	cfg := Config(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), namespaceCleanupTimeout)
		defer cancel()
		if err := DeleteNamespace(ctx, cfg, ns.Name); err != nil {
			t.Logf("lab: could not clean up after the check: %v", err)
		}
	})
	return ns.Name
}

// namespaceCleanupTimeout bounds the clean-up of one check's namespace.
const namespaceCleanupTimeout = 15 * time.Second

// Observer records every event the observed wrappers emit.
type Observer struct {
	Bus      *observe.Bus
	Recorder *observe.Recorder
}

// Observe starts recording events for one check.
func Observe(t testing.TB) *Observer {
	bus := observe.NewBus()
	rec := observe.NewRecorder(bus)
	t.Cleanup(rec.Close)
	return &Observer{Bus: bus, Recorder: rec}
}

// Events returns what has been recorded so far.
func (o *Observer) Events() []observe.Event { return o.Recorder.Events() }

// WaitFor waits until done holds for the recorded events and returns them;
// on timeout it fails with "expected <what>, saw <describe(events)>".
func (o *Observer) WaitFor(t testing.TB, what string, done func([]observe.Event) bool, describe func([]observe.Event) string) []observe.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), checkkit.WaitTimeout)
	defer cancel()
	if err := o.Recorder.WaitFor(ctx, done); err != nil {
		checkkit.Expect(t, what, describe(o.Events()))
	}
	return o.Events()
}

// QueueOptions are controller options that emit queue events to o and allow
// several controllers of the same name in one test process.
func (o *Observer) QueueOptions() controller.Options {
	skip := true
	return controller.Options{NewQueue: observe.NewQueue(o.Bus), SkipNameValidation: &skip}
}

// ForKey keeps the events about one object ("namespace/name").
func ForKey(events []observe.Event, key string) []observe.Event {
	var out []observe.Event
	for _, e := range events {
		if e.Key == key {
			out = append(out, e)
		}
	}
	return out
}

// OfKind keeps the events of the given kinds.
func OfKind(events []observe.Event, kinds ...observe.Kind) []observe.Event {
	var out []observe.Event
	for _, e := range events {
		for _, k := range kinds {
			if e.Kind == k {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

// Describe renders events briefly, in the wording of lab's trace
// (observe.Event.Brief), for failure messages:
// `queue.add_rate_limited delay=5ms failures=1, reconcile.end error error="boom"`.
func Describe(events []observe.Event) string {
	if len(events) == 0 {
		return "nothing"
	}
	const max = 12
	parts := make([]string, 0, min(len(events), max+1))
	for _, e := range events[:min(len(events), max)] {
		parts = append(parts, e.Brief())
	}
	if len(events) > max {
		parts = append(parts, fmt.Sprintf("… %d more", len(events)-max))
	}
	return strings.Join(parts, ", ")
}

// ManagerOptions are the options StartManager uses: nothing served, so many
// managers can run side by side.
func ManagerOptions(scheme *runtime.Scheme, namespace string) ctrl.Options {
	skip := true
	return ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: &skip},
		// Checks of several exercises run at once on one control plane: each
		// manager sees only its own check's namespace.
		Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{namespace: {}}},
	}
}

// Start runs mgr until the check ends and waits for its caches to sync.
func Start(t testing.TB, mgr ctrl.Manager) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager stopped with an error: %v", err)
		}
	})
	syncCtx, syncCancel := context.WithTimeout(ctx, checkkit.WaitTimeout)
	defer syncCancel()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		select {
		case err := <-done:
			done <- err // let the cleanup see it too
			checkkit.Expect(t, "the manager to start", fmt.Sprintf("it stopped: %v", err))
		default:
			checkkit.Expect(t, "the manager's caches to sync within "+checkkit.WaitTimeout.String(), "they did not")
		}
	}
}

// StartManager creates a manager (ManagerOptions: watching only namespace), lets setup register
// controllers on it, and starts it for the rest of the check.
func StartManager(t testing.TB, cfg *rest.Config, scheme *runtime.Scheme, namespace string, setup func(ctrl.Manager) error) ctrl.Manager {
	t.Helper()
	mgr, err := ctrl.NewManager(cfg, ManagerOptions(scheme, namespace))
	if err != nil {
		t.Fatalf("create manager: %v", err)
	}
	if err := setup(mgr); err != nil {
		t.Fatalf("set up the controller: %v", err)
	}
	Start(t, mgr)
	return mgr
}
