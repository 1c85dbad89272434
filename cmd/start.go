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

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/content"
	"github.com/operator-lab/lab/internal/buildinfo"
	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/internal/session"
	"github.com/operator-lab/lab/internal/tui"
	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/operator"
	"github.com/operator-lab/lab/operator/api/v1alpha1"
	"github.com/operator-lab/lab/operator/observe"
	"github.com/operator-lab/lab/operator/switches"
)

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
	// Dir is the learner's workspace (default ./lab-LAB), created if absent.
	Dir string
	// Mine runs the learner's own controller, built from the workspace,
	// instead of the reference operator.
	Mine bool
}

func newStartCmd(streams IOStreams) *cobra.Command {
	var opts StartOptions
	c := &cobra.Command{
		Use:   "start 3.1|4.4",
		Short: "Start a lab: your workspace, a control plane, the reference operator, and a live view of it",
		Long: `start first creates the lab's workspace if it is absent (like ` + "`lab init`" + `; --dir,
default ./lab-LAB; an existing one is never changed). Then it brings up a
control plane (reusing a running ` + "`lab env up`" + `), runs the
lab's reference operator in a namespace of its own, creates a sample object
(a HelloWorld for 3.1, a Database for 4.4; with --mine, the lab's own
Greeting or Database) and opens a live terminal view:
each reconcile as a sequence across Watch → Queue → Reconcile → Client → API,
the work queue, each object's phases, retry delays, and the breaker, rate
limiter and external system. Keys flip the operator's switches, change
objects and step through reconciles one at a time; ? lists them all.

L opens the lab's lesson beside the live operator (--lang, else LAB_LANG,
else the locale); in a section that has a demo, w shows it on the operator.
x lists the workspace's exercises with your progress; it updates whenever
` + "`lab check`" + ` runs in another terminal.

With --mine, your own controller runs instead of the reference one: lab
builds the exercise it names (3.1: results, 4.4: together) from your
workspace with the observation layer, so the view shows what *your* code
makes the queue do. The world around it is simulated; e changes it.

Not on a terminal, or with --plain, it prints the same event stream as
` + "`lab run --format text`" + ` until interrupted.`,
		Example: `  lab start 4.4
  lab start 3.1 --set requeue=error,timescale=10
  lab start 4.4 --lang ru
  lab start 4.4 --plain | less
  lab start 3.1 --mine --dir ~/work/lab-3.1`,
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
	f.StringVar(&opts.Dir, "dir", "", "your workspace folder, created if absent (default ./lab-LAB)")
	f.BoolVar(&opts.Mine, "mine", false, "run your own controller from the workspace instead of the reference operator")
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
	if opts.Mine && len(opts.Set) > 0 {
		return errors.New("--set changes the reference operator; with --mine your code makes those choices (press e in the view to change the simulated world)")
	}
	ws, err := openOrCreateWorkspace(opts.Lab, opts.Dir, lang)
	if err != nil {
		return err
	}
	if opts.Plain || !opts.TTY {
		err = startPlain(ctx, streams, opts, ws)
	} else {
		err = startTUI(ctx, streams, opts, ws)
	}
	var compile *checker.CompileError
	if errors.As(err, &compile) {
		// The view had room for the first error only: show them all.
		fmt.Fprintf(streams.ErrOut, "go build says:\n%s\n", compile.Message)
	}
	return err
}

// liveOptions are the options of the lab this start runs.
func (o StartOptions) liveOptions(ws *startWorkspace) liveLabOptions {
	l := liveLabOptions{Lab: o.Lab, Set: o.setText(), Kubeconfig: o.Kubeconfig, Context: o.Context}
	if o.Mine {
		l.Mine = ws
	}
	return l
}

// startPlain runs the lab like `lab run --format text` with no scenario:
// the sample object is created and the events print until interrupted.
func startPlain(ctx context.Context, streams IOStreams, opts StartOptions, ws *startWorkspace) error {
	fmt.Fprintf(streams.ErrOut, "lab start: workspace %s; edit the exercises there, then run `lab check`\n", ws.describe())
	runOpts := RunOptions{Lab: opts.Lab, Format: formatText, Set: opts.Set, Kubeconfig: opts.Kubeconfig, Context: opts.Context,
		Color: opts.TTY && os.Getenv("NO_COLOR") == ""}
	sess, err := startPrintedSession(ctx, streams, runOpts, nil, opts.liveOptions(ws), "lab start")
	if err != nil {
		return err
	}
	key, err := sess.objects.create(ctx)
	if err == nil {
		fmt.Fprintf(streams.ErrOut, "lab start: lab %s on %s, %s, created %s; Ctrl-C stops\n", opts.Lab, sess.Host, whoseController(opts, ws), key)
		watchCtx, stopWatch := context.WithCancel(ctx)
		goGuarded(func() {
			sess.WatchHealth(watchCtx, healthInterval, func(err error) {
				if err != nil {
					fmt.Fprintf(streams.ErrOut, "lab start: %v (was `lab env down` run?)\n", err)
				} else {
					fmt.Fprintln(streams.ErrOut, "lab start: the control plane answers again")
				}
			})
		})
		select {
		case <-ctx.Done():
		case <-sess.exited():
			err = sess.mine.Err()
		}
		stopWatch() // the close below stops a private control plane: no news
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
func startTUI(ctx context.Context, streams IOStreams, opts StartOptions, ws *startWorkspace) error {
	title := labTitle(opts.Lab)
	kind := sampleKind(opts, ws)
	exercises := ws.exercisesMsg(opts.Lang)
	model := tui.New(tui.Options{
		Header:    tui.Header{Lab: opts.Lab, Title: title, Operator: operatorLabel(opts, ws)},
		Startup:   plannedSteps(opts, kind),
		Lang:      opts.Lang,
		Exercises: &exercises,
	})
	p := newProgram(ctx, streams, model)

	startCtx, cancelStart := context.WithCancel(ctx)
	defer cancelStart()
	type started struct {
		lab *liveLab
		err error
	}
	done := make(chan started, 1)
	goGuarded(func() {
		lab, err := bringUp(startCtx, p, opts, ws, title, kind)
		done <- started{lab, err}
	})
	goGuarded(func() { ws.watchProgress(startCtx, opts.Lang, func(m tui.ExercisesMsg) { p.Send(m) }) })

	_, runErr := p.Run()
	cancelStart()
	up := <-done
	var closeErr error
	if up.lab != nil {
		fmt.Fprintln(streams.ErrOut, "lab start: stopping the operator and the control plane…")
		closeErr = up.lab.Close()
		up.lab.Bus.Close()
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
func bringUp(ctx context.Context, p *tea.Program, opts StartOptions, ws *startWorkspace, title, kind string) (*liveLab, error) {
	p.Send(tui.StepDoneMsg{Step: stepWorkspace, Took: ws.Took, Detail: ws.describe()})
	bus := observe.NewBus()
	// Subscribe before anything runs, so the view sees the first events too.
	sub := bus.Subscribe(observe.DefaultBuffer)
	live := opts.liveOptions(ws)
	live.Bus, live.Gate = bus, observe.NewGate()
	live.SetupLog = &stepLog{p: p, step: controlplane.StepBinaries}
	live.Progress = func(s controlplane.Step) { p.Send(tui.StepDoneMsg{Step: s.Name, Took: s.Took, Detail: s.Detail}) }
	if opts.Mine {
		p.Send(tui.StepDetailMsg{Step: stepBuildMine, Detail: "go build in a private copy of " + displayDir(ws.Dir)})
	}
	lab, err := startLiveLab(ctx, live)
	if err != nil {
		p.Send(tui.StartFailedMsg{Err: err})
		return nil, err
	}
	controls := &liveControls{operatorDriver: lab.driver, objects: lab.objects}
	t := time.Now()
	key, err := controls.objects.create(ctx)
	step := "sample " + kind
	if err != nil {
		p.Send(tui.StepDoneMsg{Step: step, Err: err})
		return lab, err
	}
	p.Send(tui.StepDoneMsg{Step: step, Took: time.Since(t), Detail: key})
	p.Send(tui.ReadyMsg{
		Header: tui.Header{Lab: opts.Lab, Title: title, KubernetesVersion: serverVersionOf(lab.Session),
			Address: lab.Host, Started: time.Now(), Namespace: lab.Namespace, Operator: operatorLabel(opts, ws)},
		Controls: controls,
		Events:   sub.C,
		Dropped:  sub.Dropped,
	})
	goGuarded(func() { lab.reportExit(ctx, func(n tui.NoticeMsg) { p.Send(n) }) })
	goGuarded(func() {
		lab.WatchHealth(ctx, healthInterval, func(err error) {
			msg := tui.ControlPlaneMsg{Lost: err != nil}
			if err != nil {
				msg.Why = err.Error()
			}
			p.Send(msg)
		})
	})
	return lab, nil
}

// healthInterval is how often the live view checks that its control plane
// still answers.
const healthInterval = 2 * time.Second

// stepWorkspace is the first start-up step: the learner's workspace.
const stepWorkspace = "workspace"

// operatorLabel is what the header says about whose controller runs.
func operatorLabel(opts StartOptions, ws *startWorkspace) string {
	if !opts.Mine {
		return ""
	}
	return whoseController(opts, ws)
}

// whoseController names the controller that runs.
func whoseController(opts StartOptions, ws *startWorkspace) string {
	if !opts.Mine {
		return "reference operator"
	}
	return fmt.Sprintf("your controller (%s/)", ws.Lab.Runner.Exercise)
}

// plannedSteps are the start-up steps shown before they happen.
func plannedSteps(opts StartOptions, kind string) []string {
	head := []string{stepWorkspace}
	tail := []string{controlplane.StepCRDs, session.StepNamespace, session.StepOperator, "sample " + kind}
	if opts.Mine {
		head = append(head, stepBuildMine)
		tail = []string{controlplane.StepCRDs, session.StepNamespace, stepRunMine, "sample " + kind}
	}
	switch {
	case opts.Kubeconfig != "" || opts.Context != "":
	case sharedControlPlaneRunning():
		head = append(head, controlplane.StepReuse)
	default:
		head = append(head, controlplane.StepBinaries, controlplane.StepEtcd, controlplane.StepAPIServer)
	}
	return append(head, tail...)
}

func sharedControlPlaneRunning() bool {
	_, err := controlplane.ReadState()
	return err == nil
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

func sampleKind(opts StartOptions, ws *startWorkspace) string {
	switch {
	case opts.Mine:
		return ws.Lab.Runner.Sample.Kind
	case opts.Lab == operator.Lab31:
		return "HelloWorld"
	}
	return "Database"
}

// liveControls is what the live view drives: the running controller's
// switches and step-through gate, and the lab's objects.
type liveControls struct {
	operatorDriver
	objects *labObjects
}

// referenceDriver drives the reference operator: the session's switches
// and the gate its reconciler waits at.
type referenceDriver struct {
	sess *session.Session
	gate *observe.Gate
}

// switchOrder is the order the header shows the switches in; flakiness and
// workers are only set with --set (workers is fixed once the operator runs).
var switchOrder = []string{switches.NameRequeue, switches.NameBackoff, switches.NameBreaker,
	switches.NameRateLimit, switches.NameExternal, switches.NameTimescale}

// timescaleSteps are the values + and - move between.
var timescaleSteps = []float64{0.5, 1, 2, 5, 10, 20, 50, 100}

func (d *referenceDriver) Switches() []tui.Switch {
	values := d.sess.Switches.Get()
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

func (d *referenceDriver) SetSwitch(name, value string) error {
	return d.sess.Switches.Set(name, value)
}
func (d *referenceDriver) Pause()       { d.gate.Pause() }
func (d *referenceDriver) Resume()      { d.gate.Resume() }
func (d *referenceDriver) Step()        { d.gate.Step() }
func (d *referenceDriver) Paused() bool { return d.gate.Paused() }
func (d *referenceDriver) Waiting() int { return d.gate.Waiting() }

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

// sampleMaker makes and changes the objects of one controller's kind.
type sampleMaker interface {
	// newObject is the n-th sample in namespace; invalid makes one whose
	// spec the controller must give up on. message says what is special.
	newObject(namespace string, n int, invalid bool) (obj client.Object, message string, err error)
	// empty is an object of the kind to read into.
	empty() client.Object
	// change makes one spec change (a new generation) and says what it was.
	change(obj client.Object) (string, error)
}

// labObjects creates, changes and deletes the lab's sample objects in the
// session namespace, announcing each action as a scenario event so the
// stream says what the learner did.
type labObjects struct {
	sess    *session.Session
	samples sampleMaker
	mu      sync.Mutex
	made    int
}

func newLabObjects(sess *session.Session, samples sampleMaker) *labObjects {
	return &labObjects{sess: sess, samples: samples}
}

func (o *labObjects) announce(op, key, message string) {
	o.sess.Bus.Emit(observe.Event{Kind: observe.KindScenario, Name: "you", Op: op, Key: key, Message: message})
}

// create makes the next sample object: orders, orders-2, … (4.4) or
// hello, hello-2, … (3.1).
func (o *labObjects) create(ctx context.Context) (string, error) {
	return o.createNext(ctx, false)
}

// createInvalid makes the next sample object with a spec the controller
// rejects for good, as `lab run`'s permanent-error scenario does.
func (o *labObjects) createInvalid(ctx context.Context) (string, error) {
	return o.createNext(ctx, true)
}

func (o *labObjects) createNext(ctx context.Context, invalid bool) (string, error) {
	o.mu.Lock()
	o.made++
	n := o.made
	o.mu.Unlock()
	obj, message, err := o.samples.newObject(o.sess.Namespace, n, invalid)
	if err != nil {
		return "", err
	}
	key := o.sess.Namespace + "/" + obj.GetName()
	o.announce("create", key, message)
	if err := o.sess.Client.Create(ctx, obj); err != nil {
		return "", fmt.Errorf("create %s: %w", key, err)
	}
	return key, nil
}

// update changes the object's spec n times in a row (each a new generation).
func (o *labObjects) update(ctx context.Context, key string, n int) error {
	nn, err := objectKey(key)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		obj := o.samples.empty()
		announced := false
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := o.sess.Client.Get(ctx, nn, obj); err != nil {
				return err
			}
			what, err := o.samples.change(obj)
			if err != nil {
				return err
			}
			// Announced before the write, so the stream shows the action
			// ahead of the watch event it causes; once, however many
			// conflicts it takes.
			if !announced {
				o.announce("update", key, what)
				announced = true
			}
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
	obj := o.samples.empty()
	obj.SetNamespace(nn.Namespace)
	obj.SetName(nn.Name)
	o.announce("delete", key, "")
	if err := o.sess.Client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

// referenceSamples are the reference operator's objects: HelloWorlds
// (3.1) and Databases (4.4).
type referenceSamples struct{ lab string }

func (r referenceSamples) newObject(namespace string, n int, invalid bool) (client.Object, string, error) {
	message := ""
	if r.lab == operator.Lab31 {
		hw := &v1alpha1.HelloWorld{
			ObjectMeta: metav1.ObjectMeta{Name: numbered("hello", n), Namespace: namespace},
			Spec:       v1alpha1.HelloWorldSpec{Message: "Hello, world", Count: 1},
		}
		if invalid {
			// Counting past the limit is refused for good.
			hw.Spec.Count = v1alpha1.MaxHelloCount + 1
			message = fmt.Sprintf("count %d > %d", hw.Spec.Count, v1alpha1.MaxHelloCount)
		}
		return hw, message, nil
	}
	name := numbered("orders", n)
	db := &v1alpha1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       v1alpha1.DatabaseSpec{Image: "postgres:17", Replicas: 1, DatabaseName: name, Username: "app", Storage: "1Gi"},
	}
	if invalid {
		// Storage that is not a quantity is refused for good.
		db.Spec.Storage = "lots"
		message = `storage "lots"`
	}
	return db, message, nil
}

func (r referenceSamples) empty() client.Object {
	if r.lab == operator.Lab31 {
		return &v1alpha1.HelloWorld{}
	}
	return &v1alpha1.Database{}
}

// change: a Database's replicas cycle 1→2→3, a HelloWorld's count goes up.
func (r referenceSamples) change(obj client.Object) (string, error) {
	switch o := obj.(type) {
	case *v1alpha1.HelloWorld:
		o.Spec.Count = o.Spec.Count%10 + 1
		return fmt.Sprintf("count → %d", o.Spec.Count), nil
	case *v1alpha1.Database:
		o.Spec.Replicas = o.Spec.Replicas%3 + 1
		return fmt.Sprintf("replicas → %d", o.Spec.Replicas), nil
	}
	return "", fmt.Errorf("%s is not a sample object", obj.GetName())
}

func numbered(base string, n int) string {
	if n == 1 {
		return base
	}
	return fmt.Sprintf("%s-%d", base, n)
}

func objectKey(key string) (client.ObjectKey, error) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok || ns == "" || name == "" {
		return client.ObjectKey{}, fmt.Errorf("object key %q is not namespace/name", key)
	}
	return client.ObjectKey{Namespace: ns, Name: name}, nil
}
