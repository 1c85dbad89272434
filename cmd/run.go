package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/internal/eventtext"
	"github.com/operator-lab/lab/internal/session"
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
	Lab      string
	Scenario string
	// For stops the run after this long (0: at the end of the scenario).
	For        time.Duration
	Format     string
	Record     string
	Set        []string
	Kubeconfig string
	Context    string
	// Color is decided by the command from the terminal and NO_COLOR.
	Color bool
	// Settle is how long the event stream must stay quiet before a finished
	// scenario ends the run (at most settleMax is waited).
	Settle time.Duration
}

const settleMax = 5 * time.Second

func newRunCmd(streams IOStreams) *cobra.Command {
	opts := RunOptions{Scenario: "create", Format: formatText, Settle: 500 * time.Millisecond}
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
			isTTY, _ := terminalOf(streams.Out)
			opts.Color = isTTY && os.Getenv("NO_COLOR") == ""
			return runRun(c.Context(), streams, opts)
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
		fmt.Fprintf(&b, "  %-10s %s (default %s): %s\n", s.Name, valid, def, s.Help)
	}
	return b.String()
}

// validate checks everything that can be checked before starting anything,
// so a typo costs no control-plane start.
func (o RunOptions) validate() (*scenario.Scenario, error) {
	if err := operator.CheckLab(o.Lab); err != nil {
		return nil, err
	}
	if o.Format != formatText && o.Format != formatJSON {
		return nil, fmt.Errorf("unknown format %q (valid: %s, %s)", o.Format, formatText, formatJSON)
	}
	if o.For < 0 {
		return nil, fmt.Errorf("--for must not be negative (got %s)", o.For)
	}
	if err := switches.New(nil).Apply(o.setText()); err != nil {
		return nil, err
	}
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

func (o RunOptions) setText() string { return strings.Join(o.Set, ",") }

func runRun(ctx context.Context, streams IOStreams, opts RunOptions) (err error) {
	scen, err := opts.validate()
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

	sess, err := startPrintedSession(ctx, streams, opts, record,
		liveLabOptions{Lab: opts.Lab, Set: opts.setText(), Kubeconfig: opts.Kubeconfig, Context: opts.Context}, "lab run")
	if err != nil {
		return err
	}
	out, sub := sess.out, sess.sub
	fmt.Fprintf(streams.ErrOut, "lab run: lab %s, scenario %s, namespace %s on %s\n", opts.Lab, opts.Scenario, sess.Namespace, sess.Host)

	runErr := drive(ctx, streams, opts, scen, sess.Session, out)
	interrupted := errors.Is(runErr, errInterrupted)
	if interrupted {
		runErr = nil
	}
	closeErr := sess.close()
	if n := sub.Dropped(); n > 0 {
		fmt.Fprintf(streams.ErrOut, "lab run: %d events were dropped (output could not keep up)\n", n)
	}
	if werr := out.finish(); werr != nil && runErr == nil {
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
func drive(ctx context.Context, streams IOStreams, opts RunOptions, scen *scenario.Scenario, sess *session.Session, out *eventPrinter) error {
	runCtx := ctx
	if opts.For > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeoutCause(ctx, opts.For, errRunTimeUp)
		defer cancel()
	}
	if scen == nil {
		<-runCtx.Done()
		return stopReason(ctx, streams, runCtx, opts.For)
	}
	err := scen.Run(runCtx, scenario.Env{
		Client: sess.Client, Namespace: sess.Namespace, Switches: sess.Switches,
		Emitter: stoppedEmitter{next: sess.Bus, ctx: ctx, runCtx: runCtx, after: opts.For},
		Settle:  func(ctx context.Context) error { return out.waitQuiet(ctx, opts.Settle, settleMax) },
	})
	if err != nil && runCtx.Err() != nil {
		return stopReason(ctx, streams, runCtx, opts.For)
	}
	return err
}

var (
	errRunTimeUp   = errors.New("--for elapsed")
	errInterrupted = errors.New("lab run interrupted")
)

// stopReason reports why a run stopped early: errInterrupted for an
// interrupt of the whole command; nil when --for ended it.
func stopReason(ctx context.Context, streams IOStreams, runCtx context.Context, after time.Duration) error {
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

// eventPrinter writes events as they come and keeps the summary.
type eventPrinter struct {
	streams IOStreams
	opts    RunOptions
	text    eventtext.Options
	json    *observe.Encoder
	record  *observe.Encoder
	summary *eventtext.Summary

	mu       sync.Mutex
	writeErr error
	last     atomic.Int64 // unix nanos of the last event
}

func newEventPrinter(streams IOStreams, opts RunOptions, record io.Writer) *eventPrinter {
	p := &eventPrinter{streams: streams, opts: opts, text: eventtext.Options{Color: opts.Color}, summary: eventtext.NewSummary()}
	if opts.Format == formatJSON {
		p.json = observe.NewEncoder(streams.Out)
	}
	if record != nil {
		p.record = observe.NewEncoder(record)
	}
	p.last.Store(time.Now().UnixNano())
	return p
}

func (p *eventPrinter) print(e observe.Event) {
	p.last.Store(time.Now().UnixNano())
	p.summary.Add(e)
	var err error
	if p.json != nil {
		err = p.json.Encode(e)
	} else {
		_, err = fmt.Fprintln(p.streams.Out, eventtext.Line(e, p.text))
	}
	if p.record != nil {
		if rerr := p.record.Encode(e); rerr != nil && err == nil {
			err = fmt.Errorf("record: %w", rerr)
		}
	}
	if err != nil {
		p.mu.Lock()
		if p.writeErr == nil {
			p.writeErr = err
		}
		p.mu.Unlock()
	}
}

// waitQuiet returns once no event arrived for quiet, or after at most max.
func (p *eventPrinter) waitQuiet(ctx context.Context, quiet, max time.Duration) error {
	deadline := time.Now().Add(max)
	tick := time.NewTicker(quiet / 5)
	defer tick.Stop()
	for {
		if since := time.Since(time.Unix(0, p.last.Load())); since >= quiet || time.Now().After(deadline) {
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// finish prints the summary: after the events in text mode, on stderr in
// JSON mode (stdout holds only JSON Lines there).
func (p *eventPrinter) finish() error {
	w := p.streams.Out
	if p.json != nil {
		w = p.streams.ErrOut
	} else {
		fmt.Fprintln(w)
	}
	if err := p.summary.Write(w); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.writeErr != nil {
		return fmt.Errorf("write events: %w", p.writeErr)
	}
	return nil
}

// printedSession is a running lab whose events a printer goroutine writes out.
type printedSession struct {
	*liveLab
	out     *eventPrinter
	sub     *observe.Subscription
	bus     *observe.Bus
	printed chan struct{}
}

// startPrintedSession starts printing the bus's events, then the session;
// progress lines carry the command's name (e.g. "lab run").
func startPrintedSession(ctx context.Context, streams IOStreams, runOpts RunOptions, record io.Writer, live liveLabOptions, prefix string) (*printedSession, error) {
	p := &printedSession{bus: observe.NewBus(), printed: make(chan struct{})}
	p.out = newEventPrinter(streams, runOpts, record)
	p.sub = p.bus.Subscribe(observe.DefaultBuffer)
	go func() {
		defer close(p.printed)
		for e := range p.sub.C {
			p.out.print(e)
		}
	}()
	live.Bus, live.SetupLog, live.Echo = p.bus, streams.ErrOut, streams.ErrOut
	live.Progress = func(s controlplane.Step) {
		fmt.Fprintf(streams.ErrOut, "%s: %s (%s)\n", prefix, s, s.Took.Round(time.Millisecond))
	}
	lab, err := startLiveLab(ctx, live)
	if err != nil {
		p.bus.Close()
		<-p.printed
		return nil, err
	}
	p.liveLab = lab
	return p, nil
}

// close stops the session, then lets the printer drain every event.
func (p *printedSession) close() error {
	err := p.liveLab.Close()
	p.bus.Close()
	<-p.printed
	return err
}
