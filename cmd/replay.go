package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"

	"github.com/operator-lab/lab/internal/eventtext"
	"github.com/operator-lab/lab/internal/iostreams"
	"github.com/operator-lab/lab/internal/tui"
	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator"
)

// ReplayOptions are the arguments of `lab replay`.
type ReplayOptions struct {
	IO   *iostreams.IOStreams
	File string
}

// NewCmdReplay is `lab replay`; runF, if set, runs instead of the real work.
func NewCmdReplay(streams *iostreams.IOStreams, runF func(*ReplayOptions) error) *cobra.Command {
	opts := &ReplayOptions{IO: streams}
	return &cobra.Command{
		Use:   "replay FILE",
		Short: "Step through a recorded event trace in the live view",
		Long: `replay opens a trace recorded with ` + "`lab run --record FILE`" + ` (JSON Lines) in the
same view as ` + "`lab start`" + `, with nothing running: → and ← step one event,
] and [ one whole reconcile, space plays it. Not on a terminal, it prints
the trace as text.`,
		Example: `  lab run 4.4 --scenario external-outage --record outage.jsonl
  lab replay outage.jsonl`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.File = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runReplay(c.Context(), opts)
		},
	}
}

// loadTrace reads a recorded trace; errors say which file and which line.
func loadTrace(path string) ([]observe.Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open the trace: %w", err)
	}
	defer f.Close()
	events, err := observe.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (record a trace with `lab run 4.4 --record FILE`)", path, err)
	}
	if len(events) == 0 {
		return nil, fmt.Errorf("%s holds no events (record a trace with `lab run 4.4 --record FILE`)", path)
	}
	return events, nil
}

func runReplay(ctx context.Context, opts *ReplayOptions) error {
	events, err := loadTrace(opts.File)
	if err != nil {
		return err
	}
	// Without a terminal there is no view to step through: the trace prints as text.
	if !opts.IO.IsStdoutTTY() {
		_, err := fmt.Fprint(opts.IO.Out, eventtext.Lines(events, eventtext.Options{}))
		return err
	}
	lab := traceLab(events)
	model := tui.New(tui.Options{
		Header: tui.Header{Lab: lab, Title: labTitle(lab, ""), Source: filepath.Base(opts.File), Namespace: traceNamespace(events)},
		Trace:  events,
	})
	p := newProgram(ctx, opts.IO, model)
	if _, err := p.Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		return fmt.Errorf("replay: %w", err)
	}
	return nil
}

// traceNamespace is the namespace of the trace's session, or else the one
// namespace every key of the trace is in, so the view can show names
// alone; "" otherwise.
func traceNamespace(events []observe.Event) string {
	if s, ok := traceSession(events); ok && s.Namespace != "" {
		return s.Namespace
	}
	ns := ""
	for _, e := range events {
		if e.Key == "" {
			continue
		}
		keyNS, _, ok := strings.Cut(e.Key, "/")
		if !ok || (ns != "" && keyNS != ns) {
			return ""
		}
		ns = keyNS
	}
	return ns
}

// traceSession is the session event that opens a trace (traces recorded
// before there was one have none).
func traceSession(events []observe.Event) (observe.Event, bool) {
	for _, e := range events {
		if e.Kind == observe.KindSession {
			return e, true
		}
	}
	return observe.Event{}, false
}

// traceLab is the lab of the trace's session; for older traces, the lab
// whose kinds of object it holds ("" if unsure).
func traceLab(events []observe.Event) string {
	if s, ok := traceSession(events); ok && s.Lab != "" {
		return s.Lab
	}
	for _, e := range events {
		switch e.Object {
		case "Database":
			return operator.Lab44
		case "HelloWorld":
			return operator.Lab31
		}
	}
	return ""
}
