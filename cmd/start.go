package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator-lab/lab/content"
	"github.com/operator-lab/lab/internal/buildinfo"
	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/internal/tui"
	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/operator"
	"github.com/operator-lab/lab/operator/api/v1alpha1"
	"github.com/operator-lab/lab/operator/observe"
	"github.com/operator-lab/lab/operator/session"
	"github.com/operator-lab/lab/operator/switches"
)

func init() { register(newStartCmd) }

// StartOptions are the arguments of `lab start`.
type StartOptions struct {
	Lab   string
	Plain bool
	Set   []string
	// Lang is the language of the lesson pane ("" chooses from LAB_LANG,
	// then the locale).
	Lang string
	// Kubeconfig and Context use an existing cluster instead of a local control plane.
	Kubeconfig, Context string
	// TTY says whether the streams are a terminal; the command decides it
	// from stdout, tests set it.
	TTY bool
}

func newStartCmd(streams IOStreams) *cobra.Command {
	var opts StartOptions
	c := &cobra.Command{
		Use:   "start 3.1|4.4",
		Short: "Start a lab: a control plane, the reference operator, and a live view of it",
		Long: `start brings up a control plane (reusing a running ` + "`lab env up`" + `), runs the
lab's reference operator in a namespace of its own, creates a sample object
(a HelloWorld for 3.1, a Database for 4.4) and opens a live terminal view:
each reconcile as a sequence across Watch → Queue → Reconcile → Client → API,
the work queue, each object's phases, retry delays, and the breaker, rate
limiter and external system. Keys flip the operator's switches, change
objects and step through reconciles one at a time; ? lists them all.

L opens the lab's lesson beside the live operator (--lang, else LAB_LANG,
else the locale); in a section that has a demo, w shows it on the operator.

Not on a terminal, or with --plain, it prints the same event stream as
` + "`lab run --format text`" + ` until interrupted.`,
		Example: `  lab start 4.4
  lab start 3.1 --set requeue=error,timescale=10
  lab start 4.4 --lang ru
  lab start 4.4 --plain | less`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Lab = args[0]
			opts.TTY, _ = terminalOf(streams.Out)
			return runStart(c.Context(), streams, opts)
		},
	}
	f := c.Flags()
	f.BoolVar(&opts.Plain, "plain", false, "print the event stream as text instead of the live view")
	f.StringArrayVar(&opts.Set, "set", nil, "switches as name=value,... (repeatable); see lab run --help")
	f.StringVar(&opts.Lang, "lang", "", "language of the lesson pane: en or ru (default: $LAB_LANG, else the locale)")
	f.StringVar(&opts.Kubeconfig, "kubeconfig", "", "use the cluster of this kubeconfig instead of a local control plane")
	f.StringVar(&opts.Context, "context", "", "kubeconfig context to use (implies an existing cluster)")
	return c
}

func (o StartOptions) setText() string { return strings.Join(o.Set, ",") }

func runStart(ctx context.Context, streams IOStreams, opts StartOptions) error {
	if err := operator.CheckLab(opts.Lab); err != nil {
		return err
	}
	if err := switches.New(nil).Apply(opts.setText()); err != nil {
		return err
	}
	lang, err := content.Lang(opts.Lang)
	if err != nil {
		return err
	}
	opts.Lang = lang
	if opts.Plain || !opts.TTY {
		return startPlain(ctx, streams, opts)
	}
	return startTUI(ctx, streams, opts)
}

// startPlain runs the lab like `lab run --format text` with no scenario:
// the sample object is created and the events print until interrupted.
func startPlain(ctx context.Context, streams IOStreams, opts StartOptions) error {
	runOpts := RunOptions{Lab: opts.Lab, Format: formatText, Set: opts.Set, Kubeconfig: opts.Kubeconfig, Context: opts.Context,
		Color: opts.TTY && os.Getenv("NO_COLOR") == ""}
	sess, err := startPrintedSession(ctx, streams, runOpts, nil, opts.setText(), "lab start")
	if err != nil {
		return err
	}
	objects := newLabObjects(sess.Session)
	key, err := objects.create(ctx)
	if err == nil {
		fmt.Fprintf(streams.ErrOut, "lab start: lab %s on %s, created %s; Ctrl-C stops\n", opts.Lab, sess.Host, key)
		<-ctx.Done()
		fmt.Fprintln(streams.ErrOut, "lab start: stopping")
	}
	closeErr := sess.close()
	if werr := sess.out.finish(); werr != nil && err == nil {
		err = werr
	}
	return errors.Join(err, closeErr)
}

// startTUI shows the start-up screen while the lab comes up, then the live
// view; quitting it stops the operator, removes the namespace and stops a
// private control plane.
func startTUI(ctx context.Context, streams IOStreams, opts StartOptions) error {
	title := labTitle(opts.Lab)
	kind := sampleKind(opts.Lab)
	model := tui.New(tui.Options{
		Header:  tui.Header{Lab: opts.Lab, Title: title},
		Startup: plannedSteps(opts, kind),
		Lang:    opts.Lang,
	})
	p := tea.NewProgram(model, tea.WithAltScreen(), tea.WithContext(ctx),
		tea.WithInput(streams.In), tea.WithOutput(streams.Out))

	startCtx, cancelStart := context.WithCancel(ctx)
	defer cancelStart()
	type started struct {
		sess *session.Session
		err  error
	}
	done := make(chan started, 1)
	go func() {
		sess, err := bringUp(startCtx, p, opts, title, kind)
		done <- started{sess, err}
	}()

	_, runErr := p.Run()
	cancelStart()
	up := <-done
	var closeErr error
	if up.sess != nil {
		fmt.Fprintln(streams.ErrOut, "lab start: stopping the operator and the control plane…")
		closeErr = up.sess.Close()
		up.sess.Bus.Close()
	}
	if errors.Is(runErr, tea.ErrProgramKilled) || errors.Is(runErr, context.Canceled) {
		runErr = nil // interrupted: a normal way to stop
	}
	startErr := up.err
	if errors.Is(startErr, context.Canceled) {
		startErr = nil // quit during start-up
	}
	return errors.Join(startErr, runErr, closeErr)
}

// bringUp starts the session and the sample object, reporting each step to
// the start-up screen, then hands the live view its events and controls.
func bringUp(ctx context.Context, p *tea.Program, opts StartOptions, title, kind string) (*session.Session, error) {
	bus := observe.NewBus()
	// Subscribe before anything runs, so the view sees the first events too.
	sub := bus.Subscribe(observe.DefaultBuffer)
	gate := observe.NewGate()
	sess, err := session.Start(ctx, session.Options{
		Lab: opts.Lab, Set: opts.setText(), Kubeconfig: opts.Kubeconfig, Context: opts.Context,
		Bus: bus, Gate: gate,
		SetupLog: &stepLog{p: p, step: controlplane.StepBinaries},
		Progress: func(step string, took time.Duration) { reportStep(p, step, took) },
	})
	if err != nil {
		p.Send(tui.StartFailedMsg{Err: err})
		return nil, err
	}
	controls := &liveControls{sess: sess, gate: gate, objects: newLabObjects(sess)}
	t := time.Now()
	key, err := controls.objects.create(ctx)
	step := "sample " + kind
	if err != nil {
		p.Send(tui.StepDoneMsg{Step: step, Err: err})
		return sess, err
	}
	p.Send(tui.StepDoneMsg{Step: step, Took: time.Since(t), Detail: key})
	p.Send(tui.ReadyMsg{
		Header: tui.Header{Lab: opts.Lab, Title: title, KubernetesVersion: serverVersionOf(sess),
			Address: sess.Host, Started: time.Now(), Namespace: sess.Namespace},
		Controls: controls,
		Events:   sub.C,
		Dropped:  sub.Dropped,
	})
	return sess, nil
}

// plannedSteps are the start-up steps shown before they happen.
func plannedSteps(opts StartOptions, kind string) []string {
	tail := []string{controlplane.StepCRDs, "namespace", "operator", "sample " + kind}
	switch {
	case opts.Kubeconfig != "" || opts.Context != "":
		return tail
	case sharedControlPlaneRunning():
		return append([]string{controlplane.StepReuse}, tail...)
	}
	return append([]string{controlplane.StepBinaries, controlplane.StepEtcd, controlplane.StepAPIServer}, tail...)
}

func sharedControlPlaneRunning() bool {
	_, err := controlplane.ReadState()
	return err == nil
}

// reportStep maps the control plane's and session's step names onto the
// planned ones ("namespace lab-run-x7" is the "namespace" step, detail "lab-run-x7").
func reportStep(p *tea.Program, step string, took time.Duration) {
	switch {
	case step == controlplane.StepEtcd+" + "+controlplane.StepAPIServer:
		p.Send(tui.StepDoneMsg{Step: controlplane.StepEtcd, Took: took, Detail: "with kube-apiserver"})
		p.Send(tui.StepDoneMsg{Step: controlplane.StepAPIServer, Took: took})
	case strings.HasPrefix(step, "namespace "):
		p.Send(tui.StepDoneMsg{Step: "namespace", Took: took, Detail: strings.TrimPrefix(step, "namespace ")})
	case strings.HasPrefix(step, "operator "):
		p.Send(tui.StepDoneMsg{Step: "operator", Took: took})
	case strings.HasPrefix(step, controlplane.StepCRDs):
		p.Send(tui.StepDoneMsg{Step: controlplane.StepCRDs, Took: took, Detail: strings.TrimSpace(strings.TrimPrefix(step, controlplane.StepCRDs))})
	default:
		p.Send(tui.StepDoneMsg{Step: step, Took: took})
	}
}

// stepLog shows the last line of a long step's log (a binary download or
// build) beside the step on the start-up screen.
type stepLog struct {
	p    *tea.Program
	step string
}

func (l *stepLog) Write(b []byte) (int, error) {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); last != "" {
		l.p.Send(tui.StepDetailMsg{Step: l.step, Detail: last})
	}
	return len(b), nil
}

var _ io.Writer = (*stepLog)(nil)

func serverVersionOf(sess *session.Session) string {
	dc, err := discovery.NewDiscoveryClientForConfig(sess.Config)
	if err != nil {
		return "v" + buildinfo.KubernetesVersion
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return "v" + buildinfo.KubernetesVersion
	}
	return v.GitVersion
}

func labTitle(id string) string {
	if l, err := labs.Get(id); err == nil {
		if t := l.Title.In("en"); t != "" {
			return t
		}
	}
	return ""
}

func sampleKind(lab string) string {
	if lab == operator.Lab31 {
		return "HelloWorld"
	}
	return "Database"
}

// liveControls is what the live view drives: the session's switches, the
// step-through gate and the lab's objects.
type liveControls struct {
	sess    *session.Session
	gate    *observe.Gate
	objects *labObjects
}

// switchOrder is the order the header shows the switches in; flakiness and
// workers are only set with --set (workers is fixed once the operator runs).
var switchOrder = []string{switches.NameRequeue, switches.NameBackoff, switches.NameBreaker,
	switches.NameRateLimit, switches.NameExternal, switches.NameTimescale}

// timescaleSteps are the values + and - move between.
var timescaleSteps = []float64{0.5, 1, 2, 5, 10, 20, 50, 100}

func (c *liveControls) Switches() []tui.Switch {
	values := c.sess.Switches.Get()
	valid := map[string][]string{}
	for _, info := range switches.All() {
		valid[info.Name] = info.Valid
	}
	out := make([]tui.Switch, 0, len(switchOrder))
	for _, name := range switchOrder {
		v, err := values.Get(name)
		if err != nil {
			continue
		}
		options := valid[name]
		if name == switches.NameTimescale {
			options = timescaleOptions(values.Timescale)
		}
		out = append(out, tui.Switch{Name: name, Value: v, Options: options})
	}
	return out
}

// timescaleOptions is the ladder with the current value in it, so + and -
// move from wherever --set put it.
func timescaleOptions(current float64) []string {
	steps := append([]float64(nil), timescaleSteps...)
	found := false
	for _, s := range steps {
		found = found || s == current
	}
	if !found {
		steps = append(steps, current)
		sort.Float64s(steps)
	}
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = strconv.FormatFloat(s, 'g', -1, 64)
	}
	return out
}

func (c *liveControls) SetSwitch(name, value string) error { return c.sess.Switches.Set(name, value) }
func (c *liveControls) Pause()                             { c.gate.Pause() }
func (c *liveControls) Resume()                            { c.gate.Resume() }
func (c *liveControls) Step()                              { c.gate.Step() }
func (c *liveControls) Paused() bool                       { return c.gate.Paused() }
func (c *liveControls) Waiting() int                       { return c.gate.Waiting() }

func (c *liveControls) CreateObject(ctx context.Context) (string, error) {
	return c.objects.create(ctx)
}
func (c *liveControls) CreateInvalid(ctx context.Context) (string, error) {
	return c.objects.createInvalid(ctx)
}
func (c *liveControls) UpdateSpec(ctx context.Context, key string) error {
	return c.objects.update(ctx, key, 1)
}
func (c *liveControls) Burst(ctx context.Context, key string, n int) error {
	return c.objects.update(ctx, key, n)
}
func (c *liveControls) Delete(ctx context.Context, key string) error {
	return c.objects.delete(ctx, key)
}

// labObjects creates, changes and deletes the lab's sample objects in the
// session namespace, announcing each action as a scenario event so the
// stream says what the learner did.
type labObjects struct {
	sess *session.Session
	mu   sync.Mutex
	made int
}

func newLabObjects(sess *session.Session) *labObjects { return &labObjects{sess: sess} }

func (o *labObjects) announce(op, key, message string) {
	o.sess.Bus.Emit(observe.Event{Kind: observe.KindScenario, Name: "you", Op: op, Key: key, Message: message})
}

// create makes the next sample object: orders, orders-2, … (4.4) or
// hello, hello-2, … (3.1).
func (o *labObjects) create(ctx context.Context) (string, error) {
	return o.createNext(ctx, false)
}

// createInvalid makes the next sample object with a spec the operator
// rejects for good, as `lab run`'s permanent-error scenario does: a
// HelloWorld counting past the limit, a Database whose storage is not a
// quantity.
func (o *labObjects) createInvalid(ctx context.Context) (string, error) {
	return o.createNext(ctx, true)
}

func (o *labObjects) createNext(ctx context.Context, invalid bool) (string, error) {
	o.mu.Lock()
	o.made++
	n := o.made
	o.mu.Unlock()
	var obj client.Object
	message := ""
	if o.sess.Lab == operator.Lab31 {
		hw := &v1alpha1.HelloWorld{
			ObjectMeta: metav1.ObjectMeta{Name: numbered("hello", n), Namespace: o.sess.Namespace},
			Spec:       v1alpha1.HelloWorldSpec{Message: "Hello, world", Count: 1},
		}
		if invalid {
			hw.Spec.Count = v1alpha1.MaxHelloCount + 1
			message = fmt.Sprintf("count %d > %d", hw.Spec.Count, v1alpha1.MaxHelloCount)
		}
		obj = hw
	} else {
		name := numbered("orders", n)
		db := &v1alpha1.Database{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: o.sess.Namespace},
			Spec:       v1alpha1.DatabaseSpec{Image: "postgres:17", Replicas: 1, DatabaseName: name, Username: "app", Storage: "1Gi"},
		}
		if invalid {
			db.Spec.Storage = "lots"
			message = `storage "lots"`
		}
		obj = db
	}
	key := o.sess.Namespace + "/" + obj.GetName()
	o.announce("create", key, message)
	if err := o.sess.Client.Create(ctx, obj); err != nil {
		return "", fmt.Errorf("create %s: %w", key, err)
	}
	return key, nil
}

func numbered(base string, n int) string {
	if n == 1 {
		return base
	}
	return fmt.Sprintf("%s-%d", base, n)
}

// update changes the object's spec n times in a row (each a new generation):
// a Database's replicas cycle 1→2→3, a HelloWorld's count goes up.
func (o *labObjects) update(ctx context.Context, key string, n int) error {
	nn, err := objectKey(key)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		var obj client.Object
		var change func() string
		if o.sess.Lab == operator.Lab31 {
			hw := &v1alpha1.HelloWorld{}
			obj, change = hw, func() string {
				hw.Spec.Count = hw.Spec.Count%10 + 1
				return fmt.Sprintf("count → %d", hw.Spec.Count)
			}
		} else {
			db := &v1alpha1.Database{}
			obj, change = db, func() string {
				db.Spec.Replicas = db.Spec.Replicas%3 + 1
				return fmt.Sprintf("replicas → %d", db.Spec.Replicas)
			}
		}
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := o.sess.Client.Get(ctx, nn, obj); err != nil {
				return err
			}
			o.announce("update", key, change())
			return o.sess.Client.Update(ctx, obj)
		})
		if err != nil {
			return fmt.Errorf("update %s: %w", key, err)
		}
	}
	return nil
}

func (o *labObjects) delete(ctx context.Context, key string) error {
	nn, err := objectKey(key)
	if err != nil {
		return err
	}
	var obj client.Object = &v1alpha1.Database{}
	if o.sess.Lab == operator.Lab31 {
		obj = &v1alpha1.HelloWorld{}
	}
	obj.SetNamespace(nn.Namespace)
	obj.SetName(nn.Name)
	o.announce("delete", key, "")
	if err := o.sess.Client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

func objectKey(key string) (client.ObjectKey, error) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok || ns == "" || name == "" {
		return client.ObjectKey{}, fmt.Errorf("object key %q is not namespace/name", key)
	}
	return client.ObjectKey{Namespace: ns, Name: name}, nil
}
