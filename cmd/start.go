package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/internal/iostreams"
	"github.com/operator-lab/lab/internal/mine"
	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/operator"
	"github.com/operator-lab/lab/operator/switches"
)

// StartOptions are the arguments of `lab start`.
type StartOptions struct {
	IO    *iostreams.IOStreams
	Lab   string
	Plain bool
	Set   []string
	// Lang is the language of the view and the lesson: the --lang value ("" chooses
	// from LAB_LANG, then the locale), replaced by the language it chooses.
	Lang string
	// Kubeconfig and Context use an existing cluster instead of a local control plane.
	Kubeconfig, Context string
	// Dir is the learner's workspace (default ./lab-LAB), created if absent.
	Dir string
	// Mine runs the learner's own controller, built from the workspace,
	// instead of the reference operator.
	Mine bool
}

// NewCmdStart is `lab start`; runF, if set, runs instead of the real work.
func NewCmdStart(streams *iostreams.IOStreams, runF func(*StartOptions) error) *cobra.Command {
	opts := &StartOptions{IO: streams}
	c := &cobra.Command{
		Use:   "start 3.1|4.4",
		Short: "Start a lab: your workspace, a control plane, the reference operator, and a live view of it",
		Long: `start first creates the lab's workspace if it is absent (like ` + "`lab init`" + `; --dir,
default ./lab-LAB; an existing one is never changed). Then it brings up a
control plane (reusing a running ` + "`lab env up`" + `), runs the
lab's reference operator in a namespace of its own, creates a sample object
(a HelloWorld for 3.1, a Database for 4.4; with --mine, the same kind in
the exercises' own API group) and opens a live terminal view:
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
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runStart(c.Context(), opts)
		},
	}
	f := c.Flags()
	f.BoolVar(&opts.Plain, "plain", false, "print the event stream as text instead of the live view")
	f.StringArrayVar(&opts.Set, "set", nil, "switches as name=value,... (repeatable); see lab run --help")
	f.StringVar(&opts.Lang, "lang", "", "language of the view and the lesson: en or ru (default: $LAB_LANG, else the locale)")
	f.StringVar(&opts.Kubeconfig, "kubeconfig", "", "use the cluster of this kubeconfig instead of a local control plane")
	f.StringVar(&opts.Context, "context", "", "kubeconfig context to use (implies an existing cluster)")
	f.StringVar(&opts.Dir, "dir", "", "your workspace folder, created if absent (default ./lab-LAB)")
	f.BoolVar(&opts.Mine, "mine", false, "run your own controller from the workspace instead of the reference operator")
	return c
}

func (o *StartOptions) setText() string { return strings.Join(o.Set, ",") }

// validate checks the arguments before anything is created or started.
func (o *StartOptions) validate() error {
	if _, err := labs.Get(o.Lab); err != nil {
		return err
	}
	if err := switches.NewForLab(o.Lab, nil).Apply(o.setText()); err != nil {
		return err
	}
	if err := resolveLang(&o.Lang); err != nil {
		return err
	}
	if o.Mine && len(o.Set) > 0 {
		return errors.New("--set changes the reference operator; with --mine your code makes those choices (press e in the view to change the simulated world)")
	}
	return nil
}

func runStart(ctx context.Context, opts *StartOptions) error {
	streams := opts.IO
	lab, err := labs.Get(opts.Lab)
	if err != nil {
		return err
	}
	ws, err := openStartWorkspace(lab, opts.Dir, opts.Lang)
	if err != nil {
		return err
	}
	// While the learner watches, the checks get built for their first
	// `lab check`; the build ends with this lab.
	stopBuild := buildChecksWhile(lab, ws.Dir)
	defer stopBuild()
	// Only a terminal can show the live view.
	if opts.Plain || !streams.IsStdoutTTY() {
		err = startPlain(ctx, opts, ws)
	} else {
		err = startTUI(ctx, opts, ws)
	}
	// The view had room for the first error only: show them all.
	var compile *mine.CompileError
	var policy *checker.PolicyError
	switch {
	case errors.As(err, &compile):
		fmt.Fprintf(streams.ErrOut, "go build says:\n%s\n", compile.Message)
	case errors.As(err, &policy):
		fmt.Fprintln(streams.ErrOut, policy.Details())
	}
	return err
}

// liveOptions are the options of the lab this start runs.
func (o *StartOptions) liveOptions(ws *startWorkspace) liveLabOptions {
	l := liveLabOptions{Lab: o.Lab, Set: o.setText(), Kubeconfig: o.Kubeconfig, Context: o.Context}
	if o.Mine {
		l.Mine = ws
	}
	return l
}

// startPlain runs the lab like `lab run --format text` with no scenario:
// the sample object is created and the events print until interrupted.
func startPlain(ctx context.Context, opts *StartOptions, ws *startWorkspace) error {
	streams := opts.IO
	fmt.Fprintf(streams.ErrOut, "lab start: workspace %s; edit the exercises there, then run `lab check`\n", ws.describe())
	runOpts := &RunOptions{IO: streams, Lab: opts.Lab, Format: formatText, Set: opts.Set, Kubeconfig: opts.Kubeconfig, Context: opts.Context}
	sess, err := startPrintedSession(ctx, runOpts, nil, opts.liveOptions(ws), "lab start")
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
	if werr := sess.out.Finish(); werr != nil && err == nil {
		err = werr
	}
	return errors.Join(err, closeErr)
}

// whoseController names the controller that runs.
func whoseController(opts *StartOptions, ws *startWorkspace) string {
	if !opts.Mine {
		return "reference operator"
	}
	return fmt.Sprintf("your controller (%s/)", ws.Lab.Runner.Exercise)
}

func sampleKind(opts *StartOptions, ws *startWorkspace) string {
	switch {
	case opts.Mine:
		return ws.Lab.Runner.Sample.Kind
	case opts.Lab == operator.Lab31:
		return "HelloWorld"
	}
	return "Database"
}
