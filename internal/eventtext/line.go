package eventtext

import (
	"strings"
	"time"

	"github.com/muesli/termenv"

	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator/api/v1alpha1"
)

// Options control how a line looks.
type Options struct {
	// Color adds the 16 ANSI colours; the caller decides it from its
	// streams (iostreams.IOStreams.ColorEnabled).
	Color bool
	// Start, if set, makes times relative to it ("+1.234s") instead of wall-clock.
	Start time.Time
}

// lineOptions are the observation layer's line options for opts: the
// wording and columns are observe's, the colours this package's.
func (opts Options) lineOptions() observe.LineOptions {
	lo := observe.LineOptions{Start: opts.Start}
	if opts.Color {
		lo.Paint = paintPart
	}
	return lo
}

// Line renders one event on one aligned line (no trailing newline), as
// observe.Event.Line writes it, coloured if asked:
//
//	18:05:01.123  queue.add_after         database    t1/db        delay=50ms
func Line(e observe.Event, opts Options) string { return e.Line(opts.lineOptions()) }

// Lines renders events one per line, with a trailing newline each.
func Lines(events []observe.Event, opts Options) string {
	return observe.Lines(events, opts.lineOptions())
}

// A colour paints text in one of the terminal's 16 ANSI colours (or
// faint), chosen per kind and per outcome; nil leaves it plain.
type colour func(termenv.Style) termenv.Style

func fg(c termenv.ANSIColor) colour {
	return func(s termenv.Style) termenv.Style { return s.Foreground(c) }
}

var (
	ansiDim     colour = termenv.Style.Faint
	ansiRed            = fg(termenv.ANSIRed)
	ansiGreen          = fg(termenv.ANSIGreen)
	ansiYellow         = fg(termenv.ANSIYellow)
	ansiBlue           = fg(termenv.ANSIBlue)
	ansiMagenta        = fg(termenv.ANSIMagenta)
	ansiCyan           = fg(termenv.ANSICyan)
)

// paintPart colours the kind column by kind and the detail by outcome.
func paintPart(p observe.Part, e observe.Event, s string) string {
	c := kindColor(e)
	if p == observe.PartDetail {
		c = detailColor(e)
	}
	if c == nil || s == "" {
		return s
	}
	return c(termenv.String(s)).String()
}

func kindColor(e observe.Event) colour {
	switch {
	case e.Kind == observe.KindWatch:
		return ansiBlue
	case strings.HasPrefix(string(e.Kind), "queue."):
		return ansiDim
	case strings.HasPrefix(string(e.Kind), "reconcile."):
		return ansiCyan
	case e.Kind == observe.KindPhase || e.Kind == observe.KindCondition:
		return ansiMagenta
	case e.Kind == observe.KindBreaker || e.Kind == observe.KindBackoff || e.Kind == observe.KindRateLimit:
		return ansiYellow
	}
	return nil
}

func detailColor(e observe.Event) colour {
	switch e.Kind {
	case observe.KindReconcileEnd:
		switch e.Result {
		case observe.ResultSuccess:
			return ansiGreen
		case observe.ResultError, observe.ResultTerminal:
			return ansiRed
		default:
			return ansiYellow
		}
	case observe.KindClient, observe.KindExternal:
		if e.Outcome != "" && e.Outcome != observe.OutcomeOK {
			return ansiRed
		}
	case observe.KindPhase:
		if e.To == string(v1alpha1.PhaseFailed) {
			return ansiRed
		}
		if e.To == string(v1alpha1.PhaseReady) {
			return ansiGreen
		}
	}
	return nil
}
