package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"
	"k8s.io/client-go/discovery"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/content"
	"github.com/operator-lab/lab/internal/buildinfo"
	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/internal/session"
	"github.com/operator-lab/lab/internal/tui"
	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator"
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
	key, err := sess.objects.Create(ctx, "", false)
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
	key, err := controls.CreateObject(ctx)
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
