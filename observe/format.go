package observe

import (
	"strconv"
	"strings"
	"time"
)

// This file is the one wording of events as text. The text stream (`lab run`,
// `lab replay` without a terminal), test failure dumps, the hidden checks'
// failure messages and the live view's replay status line all take it from
// here, so an event reads the same wherever a learner meets it. It uses only
// the standard library: the package is linked into learners' builds, and
// colour is the caller's business (LineOptions.Paint).

// Field is one kind-specific part of an event's description.
type Field struct {
	// Name is written as "name=value"; "" writes the value alone, and "→"
	// writes "→ value" (an outcome).
	Name  string
	Value string
	// Aux marks bookkeeping (resource versions, causes, reconcile IDs,
	// timings): a trace keeps it, a brief description leaves it out.
	Aux bool
}

// String writes the field as it stands in a trace.
func (f Field) String() string {
	switch f.Name {
	case "":
		return f.Value
	case "→":
		return "→ " + f.Value
	}
	return f.Name + "=" + f.Value
}

// Fields is an event's description, in the order a trace writes it.
type Fields []Field

// String joins the fields with spaces: `delay=5ms failures=1 priority=-100`.
func (fs Fields) String() string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.String()
	}
	return strings.Join(parts, " ")
}

// Brief leaves out the bookkeeping fields.
func (fs Fields) Brief() Fields {
	out := make(Fields, 0, len(fs))
	for _, f := range fs {
		if !f.Aux {
			out = append(out, f)
		}
	}
	return out
}

// Fields describes what is specific to the event's kind; empty values are
// left out. (Time, kind, controller and key are the caller's to place.)
func (e Event) Fields() Fields {
	var f fieldList
	switch e.Kind {
	case KindWatch:
		f.add("", e.WatchType())
		f.add("", e.Object)
		f.aux("rv", e.ResourceVersion)
		f.addInt("gen", e.Generation)
	case KindQueueAdd, KindQueueAddAfter, KindQueueAddRateLimited,
		KindQueueGet, KindQueueDone, KindQueueForget:
		f.addDuration("delay", e.Delay)
		f.addInt("failures", int64(e.Failures))
		if e.Priority != nil {
			f.add("priority", strconv.Itoa(*e.Priority))
		}
		if e.Cause != 0 {
			f.aux("cause", "#"+strconv.FormatUint(e.Cause, 10))
		}
	case KindReconcileStart:
		f.aux("id", shortID(e.ReconcileID))
	case KindReconcileEnd:
		f.add("", e.Result)
		f.addDuration("requeueAfter", e.RequeueAfter)
		f.aux("took", millis(e.DurationMs))
		f.addQuoted("error", e.Error)
	case KindClient:
		c := e.ClientCall()
		f.add("", c.Verb)
		f.add("", joinNonEmpty("/", c.Object, c.Name))
		f.add("from", c.Source)
		f.add("→", c.Outcome)
		f.addQuoted("error", c.Error)
	case KindPhase:
		f.add("", orNone(e.From)+" → "+orNone(e.To))
		f.addInt("failures", int64(e.Failures))
	case KindBreaker:
		b := e.Breaker()
		if b.Transition() {
			f.add("", orNone(b.From)+" → "+orNone(b.State))
			f.addInt("failures", int64(b.Failures))
		} else {
			// A count or a refusal: the count is the news, zero included.
			f.add("", b.State)
			f.add("failures", strconv.Itoa(b.Failures))
		}
		if b.Refused {
			f.add("→", breakerRefused)
		}
		f.addDuration("probeIn", Duration(b.ProbeIn))
	case KindCondition:
		c := e.Condition()
		f.add("", c.Type+"="+string(c.Status))
		f.add("reason", c.Reason)
		f.addQuoted("message", c.Message)
	case KindBackoff:
		f.addInt("attempt", int64(e.Attempt))
		f.addDuration("delay", e.Delay)
	case KindRateLimit:
		c := e.RateLimit()
		if e.Calls > 0 { // an old trace's event, a wait, names no calls
			f.add("calls", strconv.Itoa(c.Calls))
		}
		f.addDuration("wait", Duration(c.Wait))
		if c.Wait == 0 {
			f.add("→", "allowed")
		}
	case KindExternal:
		c := e.ExternalCall()
		f.add("", c.Op)
		f.add("→", c.Outcome)
		f.aux("latency", millis(e.LatencyMs)) // as recorded: the Duration would round it
	case KindSwitch:
		name, value := e.Switch()
		f.add("", name+"="+value)
	case KindGate:
		f.add("", string(e.GateAction()))
	case KindScenario:
		step := e.ScenarioStep()
		f.add("", step.Actor)
		f.add("", step.Step)
		f.addQuoted("", step.Message)
		f.addQuoted("error", e.Error)
	case KindSession:
		f.add("lab", e.Lab)
		f.add("namespace", e.Namespace)
	case KindRunnerReady:
		if sw, value := e.RunnerReady(); sw.Name != "" {
			f.add("", sw.Name+"="+value)
			f.add("values", strings.Join(sw.Values, ","))
		}
	default: // a kind this version does not know (a newer trace): every non-empty generic field
		f.add("", e.Name)
		f.add("", e.Op)
		f.add("", e.Value)
		f.addQuoted("", e.Message)
		f.addQuoted("error", e.Error)
	}
	return f.fields
}

// Detail is every kind-specific field as a trace writes it:
// `requeue_after requeueAfter=5s took=1.2ms`.
func (e Event) Detail() string { return e.Fields().String() }

// Brief describes the event in a short phrase, its kind and the fields that
// are not bookkeeping: `queue.add_after delay=23s`,
// `reconcile.end error error="boom"`. The hidden checks quote events this way
// in their failure messages.
func (e Event) Brief() string {
	if d := e.Fields().Brief().String(); d != "" {
		return string(e.Kind) + " " + d
	}
	return string(e.Kind)
}

// Part names the parts of a Line that LineOptions.Paint may style.
type Part int

const (
	// PartKind is the kind column (padded to its width).
	PartKind Part = iota
	// PartDetail is the kind-specific fields at the end of the line.
	PartDetail
)

// LineOptions control how Line writes an event.
type LineOptions struct {
	// Start, if set, makes times relative to it ("+1.234s") instead of wall-clock.
	Start time.Time
	// Seq leads the line with the event's sequence number, which causes
	// ("cause=#12") refer to.
	Seq bool
	// Paint, if set, styles a part of the line (colours for a terminal).
	Paint func(p Part, e Event, text string) string
}

// Column widths: wide enough for the usual values, so lines align; longer
// values push the rest of the line right rather than being cut.
const (
	kindWidth       = 22
	controllerWidth = 10
	keyWidth        = 24
)

// Line writes one event on one aligned line (no trailing newline):
//
//	18:05:01.123  queue.add_after         database    t1/db        delay=50ms
func (e Event) Line(opts LineOptions) string {
	paint := opts.Paint
	if paint == nil {
		paint = func(_ Part, _ Event, s string) string { return s }
	}
	var b strings.Builder
	if opts.Seq {
		b.WriteString(pad(strconv.FormatUint(e.Seq, 10), 4, true))
		b.WriteString(" ")
	}
	b.WriteString(stamp(e.Time, opts.Start))
	b.WriteString("  ")
	b.WriteString(paint(PartKind, e, pad(string(e.Kind), kindWidth, false)))
	b.WriteString(" ")
	b.WriteString(pad(e.Controller, controllerWidth, false))
	b.WriteString(" ")
	b.WriteString(pad(e.Key, keyWidth, false))
	if d := e.Detail(); d != "" {
		b.WriteString(" ")
		b.WriteString(paint(PartDetail, e, d))
	}
	return strings.TrimRight(b.String(), " ")
}

// Lines writes events one per line, each with a trailing newline.
func Lines(events []Event, opts LineOptions) string {
	var b strings.Builder
	for _, e := range events {
		b.WriteString(e.Line(opts))
		b.WriteByte('\n')
	}
	return b.String()
}

func stamp(t, start time.Time) string {
	if t.IsZero() {
		return pad("", 12, false)
	}
	if !start.IsZero() {
		return pad("+"+strconv.FormatFloat(t.Sub(start).Seconds(), 'f', 3, 64)+"s", 12, false)
	}
	return t.Local().Format("15:04:05.000")
}

// pad fills s with spaces to width, on the left if right-aligned.
func pad(s string, width int, right bool) string {
	if len(s) >= width {
		return s
	}
	fill := strings.Repeat(" ", width-len(s))
	if right {
		return fill + s
	}
	return s + fill
}

// fieldList collects fields, skipping empty values.
type fieldList struct{ fields Fields }

func (f *fieldList) add(name, v string) {
	if v != "" {
		f.fields = append(f.fields, Field{Name: name, Value: v})
	}
}

func (f *fieldList) aux(name, v string) {
	if v != "" {
		f.fields = append(f.fields, Field{Name: name, Value: v, Aux: true})
	}
}

func (f *fieldList) addQuoted(name, v string) {
	if v != "" {
		f.add(name, strconv.Quote(v))
	}
}

func (f *fieldList) addInt(name string, v int64) {
	if v != 0 {
		f.add(name, strconv.FormatInt(v, 10))
	}
}

func (f *fieldList) addDuration(name string, d Duration) {
	if d != 0 {
		f.add(name, d.String())
	}
}

func millis(ms float64) string {
	if ms <= 0 {
		return ""
	}
	return strconv.FormatFloat(ms, 'f', 1, 64) + "ms"
}

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
