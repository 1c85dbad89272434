package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/operator-lab/lab/internal/eventtext"
	"github.com/operator-lab/lab/internal/iostreams"
	"github.com/operator-lab/lab/internal/session"
	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator"
	"github.com/operator-lab/lab/operator/scenario"
	"github.com/operator-lab/lab/operator/switches"
)

// Output formats of lab run.
const (
	formatText = "text"
	formatJSON = "json"
)

// noScenario runs the operator without a driver, until --for or Ctrl-C.
const noScenario = "none"

// RunOptions are the arguments of `lab run`.
type RunOptions struct {
	IO       *iostreams.IOStreams
	Lab      string
	Scenario string
	// For stops the run after this long (0: at the end of the scenario).
	For        time.Duration
	Format     string
	Record     string
	Set        []string
	Kubeconfig string
	Context    string
	// Settle is how long the event stream must stay quiet before a finished
	// scenario ends the run (at most settleMax is waited).
	Settle time.Duration
}

const settleMax = 5 * time.Second

// NewCmdRun is `lab run`; runF, if set, runs instead of the real work.
func NewCmdRun(streams *iostreams.IOStreams, runF func(*RunOptions) error) *cobra.Command {
	opts := &RunOptions{IO: streams, Scenario: "create", Format: formatText, Settle: 500 * time.Millisecond}
	c := &cobra.Command{
		Use:   "run 3.1|4.4",
		Short: "Run the reference operator headless through a scenario and print its events",
		Long: `run starts (or reuses) a control plane, runs the reference operator of a lab
in a namespace of its own, drives a scenario, and prints every event the
operator emits: watch events, queue calls, reconciles, client calls, phases,
conditions, breaker, backoff, rate limiting and external calls. At the end it
prints a summary. The namespace is removed on exit. An interrupted run
(Ctrl-C, SIGTERM) prints the summary and exits with 128+signal (130, 143).

Scenarios:
` + scenarioHelp() + `
Switches (--set name=value,...):
` + switchHelp(),
		Example: `  lab run 4.4 --scenario external-outage --set timescale=10
  lab run 3.1 --set requeue=error,external=down --scenario none --for 5s
  lab run 4.4 --format json --record trace.jsonl`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Lab = args[0]
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runRun(c.Context(), opts)
		},
	}
	f := c.Flags()
	f.StringVar(&opts.Scenario, "scenario", opts.Scenario, `scenario to drive ("none": just run the operator)`)
	f.DurationVar(&opts.For, "for", 0, "stop after this long (default: when the scenario ends)")
	f.StringVar(&opts.Format, "format", opts.Format, "output format: text or json (JSON Lines, one event per line)")
	f.StringVar(&opts.Record, "record", "", "also write the events to this file as JSON Lines")
	f.StringArrayVar(&opts.Set, "set", nil, "switches as name=value,... (repeatable)")
	f.StringVar(&opts.Kubeconfig, "kubeconfig", "", "use the cluster of this kubeconfig instead of a local control plane")
	f.StringVar(&opts.Context, "context", "", "kubeconfig context to use (implies an existing cluster)")
	return c
}

func scenarioHelp() string {
	var b strings.Builder
	for _, lab := range operator.Labs() {
		for _, s := range scenario.All(lab) {
			fmt.Fprintf(&b, "  %s %-16s %s\n", lab, s.Name, s.Summary)
		}
	}
	return b.String()
}

func switchHelp() string {
	var b strings.Builder
	defaults := switches.Defaults()
	for _, s := range switches.All() {
		valid := s.ValidText
		if s.Valid != nil {
			valid = strings.Join(s.Valid, "|")
		}
		def, _ := defaults.Get(s.Name)
		only := ""
		if s.Labs != nil {
			only = " (lab " + strings.Join(s.Labs, ", ") + " only)"
		}
		fmt.Fprintf(&b, "  %-10s %s (default %s): %s%s\n", s.Name, valid, def, s.Help, only)
	}
	return b.String()
}

// validate checks everything that can be checked before starting anything,
// so a typo costs no control-plane start.
func (o *RunOptions) validate() error {
	if _, err := labs.Get(o.Lab); err != nil {
		return err
	}
	if o.Format != formatText && o.Format != formatJSON {
		return fmt.Errorf("unknown format %q (valid: %s, %s)", o.Format, formatText, formatJSON)
	}
	if o.For < 0 {
		return fmt.Errorf("--for must not be negative (got %s)", o.For)
	}
	if err := switches.NewForLab(o.Lab, nil).Apply(o.setText()); err != nil {
		return err
	}
	_, err := o.scenario()
	return err
}

// scenario is the scenario to drive: nil for none.
func (o *RunOptions) scenario() (*scenario.Scenario, error) {
	if o.Scenario == noScenario {
		if o.For == 0 {
			return nil, errors.New(`--scenario none runs until --for or Ctrl-C: give --for a duration, or pick a scenario`)
		}
		return nil, nil
	}
	s, err := scenario.Get(o.Lab, o.Scenario)
	if err != nil {
		return nil, fmt.Errorf("unknown scenario %q for lab %s (valid: %s, or %s to only run the operator)",
			o.Scenario, o.Lab, strings.Join(scenario.Names(o.Lab), ", "), noScenario)
	}
	return &s, nil
}

func (o *RunOptions) setText() string { return strings.Join(o.Set, ",") }

func runRun(ctx context.Context, opts *RunOptions) (err error) {
	streams := opts.IO
	scen, err := opts.scenario()
	if err != nil {
		return err
	}
	var record io.Writer // stays a nil interface without --record
	if opts.Record != "" {
		f, err := os.Create(opts.Record)
		if err != nil {
			return fmt.Errorf("create the record file: %w", err)
		}
		record = f
		defer func() {
			if cerr := f.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("write the record file: %w", cerr)
			}
		}()
	}

	sess, err := startPrintedSession(ctx, opts, record,
		liveLabOptions{Lab: opts.Lab, Set: opts.setText(), Kubeconfig: opts.Kubeconfig, Context: opts.Context}, "lab run")
	if err != nil {
		return err
	}
	out, sub := sess.out, sess.sub
	fmt.Fprintf(streams.ErrOut, "lab run: lab %s, scenario %s, namespace %s on %s\n", opts.Lab, opts.Scenario, sess.Namespace, sess.Host)

	runErr := drive(ctx, opts, scen, sess.Session, out)
	interrupted := errors.Is(runErr, errInterrupted)
	if interrupted {
		runErr = nil
	}
	closeErr := sess.close()
	if n := sub.Dropped(); n > 0 {
		fmt.Fprintf(streams.ErrOut, "lab run: %d events were dropped (output could not keep up)\n", n)
	}
	if werr := out.Finish(); werr != nil && runErr == nil {
		runErr = werr
	}
	if err := errors.Join(runErr, closeErr); err != nil {
		return err
	}
	if interrupted {
		// The summary is out; the exit status tells scripts the run was cut short.
		return interruptedExit(ctx)
	}
	return nil
}

// drive runs the scenario (or just waits) until it ends, --for passes or ctx
// is cancelled; an interrupt (ctx cancelled) returns errInterrupted.
func drive(ctx context.Context, opts *RunOptions, scen *scenario.Scenario, sess *session.Session, out *eventtext.Printer) error {
	runCtx := ctx
	if opts.For > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeoutCause(ctx, opts.For, errRunTimeUp)
		defer cancel()
	}
	if scen == nil {
		<-runCtx.Done()
		return stopReason(ctx, opts.IO, runCtx, opts.For)
	}
	err := scen.Run(runCtx, scenario.Env{
		Client: sess.Client, Namespace: sess.Namespace, Switches: sess.Switches,
		Emitter: stoppedEmitter{next: sess.Bus, ctx: ctx, runCtx: runCtx, after: opts.For},
		Settle:  func(ctx context.Context) error { return out.WaitQuiet(ctx, opts.Settle, settleMax) },
	})
	if err != nil && runCtx.Err() != nil {
		return stopReason(ctx, opts.IO, runCtx, opts.For)
	}
	return err
}

var (
	errRunTimeUp   = errors.New("--for elapsed")
	errInterrupted = errors.New("lab run interrupted")
)

// stopReason reports why a run stopped early: errInterrupted for an
// interrupt of the whole command; nil when --for ended it.
func stopReason(ctx context.Context, streams *iostreams.IOStreams, runCtx context.Context, after time.Duration) error {
	if ctx.Err() != nil {
		fmt.Fprintln(streams.ErrOut, "lab run: interrupted")
		return errInterrupted
	}
	if errors.Is(context.Cause(runCtx), errRunTimeUp) {
		fmt.Fprintf(streams.ErrOut, "lab run: stopped: --for elapsed (the run ended after %s)\n", after)
	}
	return nil
}

// stoppedEmitter passes a scenario's events on, except its "failed" step
// when the only failure is the run being stopped (--for elapsed, or an
// interrupt): that becomes a "stopped" step saying so, not a failed create.
type stoppedEmitter struct {
	next        observe.Emitter
	ctx, runCtx context.Context
	after       time.Duration
}

func (e stoppedEmitter) Emit(ev observe.Event) {
	if ev.Kind == observe.KindScenario && ev.Op == "failed" && e.runCtx.Err() != nil {
		ev.Op, ev.Message = "stopped", fmt.Sprintf("the run ended after --for %s, before the scenario finished", e.after)
		if e.ctx.Err() != nil {
			ev.Message = "interrupted before the scenario finished"
		}
	}
	e.next.Emit(ev)
}
