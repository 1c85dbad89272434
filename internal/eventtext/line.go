package eventtext

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/muesli/termenv"
	"github.com/operator-lab/lab/operator/observe"
)

// Options control how a line looks.
type Options struct {
	// Color adds ANSI colours (only for terminals).
	Color bool
	// Start, if set, makes times relative to it ("+1.234s") instead of wall-clock.
	Start time.Time
}

// Column widths: wide enough for the usual values, so lines align; longer
// values push the rest of the line right rather than being cut.
const (
	kindWidth       = 22
	controllerWidth = 10
	keyWidth        = 24
)

// Line renders one event on one line (no trailing newline):
//
//	18:05:01.123  queue.add_after         database    t1/db        delay=50ms
func Line(e observe.Event, opts Options) string {
	var b strings.Builder
	b.WriteString(stamp(e.Time, opts.Start))
	b.WriteString("  ")
	b.WriteString(paint(opts.Color, kindColor(e), pad(string(e.Kind), kindWidth)))
	b.WriteString(" ")
	b.WriteString(pad(e.Controller, controllerWidth))
	b.WriteString(" ")
	b.WriteString(pad(e.Key, keyWidth))
	if d := Detail(e); d != "" {
		b.WriteString(" ")
		b.WriteString(paint(opts.Color, detailColor(e), d))
	}
	return strings.TrimRight(b.String(), " ")
}

func stamp(t, start time.Time) string {
	if t.IsZero() {
		return pad("", 12)
	}
	if !start.IsZero() {
		return pad("+"+strconv.FormatFloat(t.Sub(start).Seconds(), 'f', 3, 64)+"s", 12)
	}
	return t.Local().Format("15:04:05.000")
}

func pad(s string, width int) string {
	if len(s) >= width {
		return s
	}
	return s + strings.Repeat(" ", width-len(s))
}

// Detail renders the fields specific to the event's kind.
func Detail(e observe.Event) string {
	var f fields
	switch e.Kind {
	case observe.KindWatch:
		f.add("", e.Type)
		f.add("", e.Object)
		f.add("rv", e.ResourceVersion)
		f.addInt("gen", e.Generation)
	case observe.KindQueueAdd, observe.KindQueueAddAfter, observe.KindQueueAddRateLimited,
		observe.KindQueueGet, observe.KindQueueDone, observe.KindQueueForget:
		f.addDuration("delay", e.Delay)
		f.addInt("failures", int64(e.Failures))
		if e.Priority != nil {
			f.add("priority", strconv.Itoa(*e.Priority))
		}
		if e.Cause != 0 {
			f.add("cause", "#"+strconv.FormatUint(e.Cause, 10))
		}
	case observe.KindReconcileStart:
		f.add("id", shortID(e.ReconcileID))
	case observe.KindReconcileEnd:
		f.add("", e.Result)
		f.addDuration("requeueAfter", e.RequeueAfter)
		if e.DurationMs > 0 {
			f.add("took", strconv.FormatFloat(e.DurationMs, 'f', 1, 64)+"ms")
		}
		f.addQuoted("error", e.Error)
	case observe.KindClient:
		f.add("", e.Verb)
		f.add("", joinNonEmpty("/", e.Object, e.Name))
		f.add("from", e.Source)
		f.add("→", e.Outcome)
		f.addQuoted("error", e.Error)
	case observe.KindPhase, observe.KindBreaker:
		f.add("", orNone(e.From)+" → "+orNone(e.To))
		f.addInt("failures", int64(e.Failures))
	case observe.KindCondition:
		f.add("", e.Type+"="+e.Status)
		f.add("reason", e.Reason)
		f.addQuoted("message", e.Message)
	case observe.KindBackoff:
		f.addInt("attempt", int64(e.Attempt))
		f.addDuration("delay", e.Delay)
	case observe.KindRateLimit:
		f.addDuration("wait", e.Wait)
	case observe.KindExternal:
		f.add("", e.Op)
		f.add("→", e.Outcome)
		if e.LatencyMs > 0 {
			f.add("latency", strconv.FormatFloat(e.LatencyMs, 'f', 1, 64)+"ms")
		}
	case observe.KindSwitch:
		f.add("", e.Name+"="+e.Value)
	default: // gate, scenario and kinds added later: every non-empty generic field
		f.add("", e.Name)
		f.add("", e.Op)
		f.add("", e.Value)
		f.addQuoted("", e.Message)
		f.addQuoted("error", e.Error)
	}
	return f.String()
}

// fields builds "k=v k=v" text, skipping empty values; an empty key writes
// the value alone.
type fields struct{ parts []string }

func (f *fields) add(k, v string) {
	if v == "" {
		return
	}
	switch k {
	case "":
		f.parts = append(f.parts, v)
	case "→":
		f.parts = append(f.parts, "→ "+v)
	default:
		f.parts = append(f.parts, k+"="+v)
	}
}

func (f *fields) addQuoted(k, v string) {
	if v == "" {
		return
	}
	f.add(k, strconv.Quote(v))
}

func (f *fields) addInt(k string, v int64) {
	if v != 0 {
		f.add(k, strconv.FormatInt(v, 10))
	}
}

func (f *fields) addDuration(k string, d observe.Duration) {
	if d != 0 {
		f.add(k, d.String())
	}
}

func (f *fields) String() string { return strings.Join(f.parts, " ") }

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
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

func paint(on bool, c colour, s string) string {
	if !on || c == nil || s == "" {
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
		if e.To == "Failed" {
			return ansiRed
		}
		if e.To == "Ready" {
			return ansiGreen
		}
	}
	return nil
}

// Lines renders events one per line, with a trailing newline each.
func Lines(events []observe.Event, opts Options) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintln(&b, Line(e, opts))
	}
	return b.String()
}
