package switches

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/operator-lab/lab/internal/l10n"
	"github.com/operator-lab/lab/observe"
)

// Requeue is how a controller reports "not done yet / failed", for example
// when the external system is down.
type Requeue string

const (
	// RequeueError returns the error: the queue retries through its rate
	// limiter (AddRateLimited, 5ms·2ⁿ per item up to 1000s).
	RequeueError Requeue = "error"
	// RequeueRequeue returns Result{Requeue: true} (deprecated since
	// controller-runtime v0.21): also AddRateLimited, not an immediate retry.
	RequeueRequeue Requeue = "requeue"
	// RequeueAfter returns Result{RequeueAfter: d}: the queue forgets the
	// item's failures and adds it back after d.
	RequeueAfter Requeue = "after"
	// RequeueTerminal returns reconcile.TerminalError(err) and marks the object
	// Failed: no retry until something changes.
	RequeueTerminal Requeue = "terminal"
)

// Backoff says who chooses retry delays.
type Backoff string

const (
	// BackoffController leaves backoff to controller-runtime: with
	// requeue=error|requeue the queue's per-item rate limiter picks the delay;
	// with requeue=after the controller uses a fixed retry interval.
	BackoffController Backoff = "controller"
	// BackoffLesson is the lesson's exponential backoff computed by the
	// controller: 5s·2ⁿ capped at 5m, from a retry count persisted in status,
	// returned as RequeueAfter (so it applies with requeue=after).
	BackoffLesson Backoff = "lesson"
)

// External is how the simulated external system behaves.
type External string

const (
	ExternalHealthy     External = "healthy"
	ExternalDown        External = "down"
	ExternalFlaky       External = "flaky"
	ExternalSlow        External = "slow"
	ExternalRateLimited External = "ratelimited"
)

// Switch names, as used in "k=v" strings and in switch events.
const (
	NameRequeue   = "requeue"
	NameBreaker   = "breaker"
	NameRateLimit = "ratelimit"
	NameBackoff   = "backoff"
	NameExternal  = "external"
	NameFlakiness = "flakiness"
	NameTimescale = "timescale"
	NameWorkers   = "workers"
)

// patternsLab is lab 4.4 (operator.Lab44; operator imports this package, so
// the id is written here too, and this package's tests check it names a
// lab): its Database controller alone calls the external system through the
// circuit breaker and the rate limiter, and computes the lesson's backoff.
// Lab 3.1's HelloWorld controller calls its dependency directly.
const patternsLab = "4.4"

// Values is a snapshot of every switch.
type Values struct {
	Requeue   Requeue
	Breaker   bool
	RateLimit bool
	Backoff   Backoff
	External  External
	// Flakiness is the probability (0..1) that a call fails when External is flaky.
	Flakiness float64
	// Timescale divides every delay the operator chooses: 10 makes a 5 s
	// backoff 0.5 s. Always > 0.
	Timescale float64
	// Workers is MaxConcurrentReconciles; it applies when the operator starts.
	Workers int
}

// Defaults are the values a new Switches starts with.
func Defaults() Values {
	return Values{
		Requeue:   RequeueAfter,
		Breaker:   true,
		RateLimit: true,
		Backoff:   BackoffLesson,
		External:  ExternalHealthy,
		Flakiness: 0.3,
		Timescale: 1,
		Workers:   1,
	}
}

// Scale divides d by the timescale.
func (v Values) Scale(d time.Duration) time.Duration {
	return time.Duration(float64(d) / v.Timescale)
}

// Get returns the value of the named switch as text, as Set accepts it.
func (v Values) Get(name string) (string, error) {
	switch name {
	case NameRequeue:
		return string(v.Requeue), nil
	case NameBreaker:
		return onOff(v.Breaker), nil
	case NameRateLimit:
		return onOff(v.RateLimit), nil
	case NameBackoff:
		return string(v.Backoff), nil
	case NameExternal:
		return string(v.External), nil
	case NameFlakiness:
		return strconv.FormatFloat(v.Flakiness, 'g', -1, 64), nil
	case NameTimescale:
		return strconv.FormatFloat(v.Timescale, 'g', -1, 64), nil
	case NameWorkers:
		return strconv.Itoa(v.Workers), nil
	}
	return "", unknownName(name, "")
}

// String renders every switch as "k=v,k=v" in the order of Names, which
// Apply accepts back.
func (v Values) String() string {
	parts := make([]string, 0, len(specs))
	for _, s := range specs {
		val, _ := v.Get(s.name)
		parts = append(parts, s.name+"="+val)
	}
	return strings.Join(parts, ",")
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// spec describes one switch: its values (for help and errors) and what
// each does, and how a text value is parsed into Values.
type spec struct {
	name string
	help string
	// choices are the values of a switch that takes one of a few, each with
	// its effect; nil for numeric switches, which validText describes.
	choices []Choice
	// validText describes numeric values in errors and help.
	validText string
	// effect words, in p's language, the effect of a value not among
	// choices: a number, or a state of the simulated external system (in a
	// learner's world, whose runner names its own states, any state).
	effect func(p l10n.Printer, value string) string
	set    func(v *Values, text string) error
	// labs are the labs whose controller reads the switch; nil: every lab's.
	labs []string
}

// Choice is one value of a switch and, in a line, what it does to the next
// reconciles: the live view says it when a learner flips the switch. The
// Effect is English, the key of its translation (EffectIn); "" leaves the
// wording to the switch's effect func.
type Choice struct {
	Value  string
	Effect string
}

// valid lists the values of a switch with choices; nil for a numeric one.
func (s spec) valid() []string {
	if s.choices == nil {
		return nil
	}
	out := make([]string, len(s.choices))
	for i, c := range s.choices {
		out[i] = c.Value
	}
	return out
}

var specs = []spec{
	{name: NameRequeue, help: "how \"not done yet / failed\" is returned",
		choices: []Choice{
			{string(RequeueError), l10n.Mark("not-ready returns an error → AddRateLimited (5ms·2ⁿ per item)")},
			{string(RequeueRequeue), l10n.Mark("returns Requeue: true (deprecated) → also AddRateLimited, not immediate")},
			{string(RequeueAfter), l10n.Mark("returns RequeueAfter → Forget + AddAfter(d): a fixed delay you choose")},
			{string(RequeueTerminal), l10n.Mark("returns TerminalError → logged, not retried, no Forget")},
		},
		set: func(v *Values, t string) error { v.Requeue = Requeue(t); return nil }},
	{name: NameBreaker, help: "circuit breaker around external calls",
		choices: []Choice{
			{"on", l10n.Mark("external calls go through the circuit breaker")},
			{"off", l10n.Mark("external calls bypass the circuit breaker")},
		},
		set:  func(v *Values, t string) error { v.Breaker = t == "on"; return nil },
		labs: []string{patternsLab}},
	{name: NameRateLimit, help: "client-side rate limiting of external calls",
		choices: []Choice{
			{"on", l10n.Mark("external calls are rate limited (x/time/rate)")},
			{"off", l10n.Mark("external calls are not rate limited")},
		},
		set:  func(v *Values, t string) error { v.RateLimit = t == "on"; return nil },
		labs: []string{patternsLab}},
	{name: NameBackoff, help: "who chooses retry delays",
		choices: []Choice{
			{string(BackoffController), l10n.Mark("retry delays come from the queue's rate limiter")},
			{string(BackoffLesson), l10n.Mark("retry delays come from the lesson's 5s·2ⁿ backoff via RequeueAfter")},
		},
		set:  func(v *Values, t string) error { v.Backoff = Backoff(t); return nil },
		labs: []string{patternsLab}},
	{name: NameExternal, help: "behaviour of the simulated external system",
		choices: []Choice{
			{Value: string(ExternalHealthy)},
			{Value: string(ExternalDown)},
			{Value: string(ExternalFlaky)},
			{Value: string(ExternalSlow)},
			{Value: string(ExternalRateLimited)},
		},
		effect: externalEffect,
		set:    func(v *Values, t string) error { v.External = External(t); return nil }},
	{name: NameFlakiness, help: "failure probability when external=flaky",
		validText: "a number from 0 to 1",
		effect: func(p l10n.Printer, v string) string {
			return p.Textf("while external=flaky, each call fails with probability %s", v)
		},
		set: func(v *Values, t string) error {
			p, err := strconv.ParseFloat(t, 64)
			if err != nil || math.IsNaN(p) || p < 0 || p > 1 {
				return errors.New("want a number from 0 to 1")
			}
			v.Flakiness = p
			return nil
		}},
	{name: NameTimescale, help: "divides every delay the operator chooses (10 = ten times faster)",
		validText: "a number greater than 0, at most 10000",
		effect:    timescaleEffect,
		set: func(v *Values, t string) error {
			f, err := strconv.ParseFloat(t, 64)
			if err != nil || math.IsNaN(f) || f <= 0 || f > 10000 {
				return errors.New("want a number greater than 0, at most 10000")
			}
			v.Timescale = f
			return nil
		}},
	{name: NameWorkers, help: "MaxConcurrentReconciles (applies at start)",
		validText: "a whole number from 1 to 64",
		effect: func(p l10n.Printer, n string) string {
			return p.Textf("MaxConcurrentReconciles %s from the operator's next start", n)
		},
		set: func(v *Values, t string) error {
			n, err := strconv.Atoi(t)
			if err != nil || n < 1 || n > 64 {
				return errors.New("want a whole number from 1 to 64")
			}
			v.Workers = n
			return nil
		}},
}

func externalEffect(p l10n.Printer, state string) string {
	return p.Textf("the simulated external system is now %s", state)
}

func timescaleEffect(p l10n.Printer, text string) string {
	f, err := strconv.ParseFloat(text, 64)
	switch {
	case err != nil || f == 1:
		return p.Text("delays run at real time")
	case f > 1:
		return p.Textf("delays the operator chooses are %s× shorter", text)
	}
	return p.Textf("delays the operator chooses are %s× longer", strconv.FormatFloat(1/f, 'g', 3, 64))
}

// Effect says in one line what a switch's value does to the next
// reconciles; "" for a switch it does not know.
func Effect(name, value string) string { return EffectIn(l10n.Printer{}, name, value) }

// EffectIn is Effect in p's language, as the live view says it.
func EffectIn(p l10n.Printer, name, value string) string {
	s, ok := lookup(name)
	if !ok {
		return ""
	}
	for _, c := range s.choices {
		if c.Value == value && c.Effect != "" {
			return p.Text(c.Effect)
		}
	}
	if s.effect != nil {
		return s.effect(p, value)
	}
	return ""
}

// Info describes one switch for help screens.
type Info struct {
	Name string
	Help string
	// Valid lists the accepted values, or is nil for a numeric switch
	// described by ValidText.
	Valid     []string
	ValidText string
	// Labs are the labs whose controller alone reads the switch; nil when
	// every lab's does.
	Labs []string
}

// All describes every switch, in a stable order.
func All() []Info {
	out := make([]Info, 0, len(specs))
	for _, s := range specs {
		out = append(out, s.info())
	}
	return out
}

// ForLab describes the switches lab's controller reads, in All's order.
func ForLab(lab string) []Info {
	out := make([]Info, 0, len(specs))
	for _, s := range specs {
		if s.in(lab) {
			out = append(out, s.info())
		}
	}
	return out
}

func (s spec) info() Info {
	return Info{Name: s.name, Help: s.help, Valid: s.valid(), ValidText: s.validText, Labs: slices.Clone(s.labs)}
}

// in reports whether lab's controller reads the switch ("" stands for
// every lab: the switches of New).
func (s spec) in(lab string) bool {
	return lab == "" || s.labs == nil || slices.Contains(s.labs, lab)
}

// InLab reports whether lab's controller reads the named switch: setting
// one it does not read would change nothing on screen or in the cluster.
func InLab(name, lab string) bool {
	s, ok := lookup(name)
	return ok && s.in(lab)
}

// OnlyIn lists the labs whose controller alone reads the named switch; nil
// when every lab's does (or the switch is unknown).
func OnlyIn(name string) []string {
	s, _ := lookup(name)
	return slices.Clone(s.labs)
}

// NotInLab is the error for setting, in lab, a switch its controller does
// not read: Belongs, and the switches lab does read. Nil when lab reads it.
func NotInLab(name, lab string) error {
	s, ok := lookup(name)
	if !ok {
		return unknownName(name, lab)
	}
	if s.in(lab) {
		return nil
	}
	return fmt.Errorf("%s (switches of lab %s: %s)", Belongs(name, lab), lab, strings.Join(namesIn(lab), ", "))
}

// Belongs says, for a switch lab's controller does not read, which lab
// it belongs to: "switch breaker belongs to lab 4.4; lab 3.1's controller
// does not use it". "" when lab reads it.
func Belongs(name, lab string) string { return BelongsIn(l10n.Printer{}, name, lab) }

// BelongsIn is Belongs in p's language, as the live view says it.
func BelongsIn(p l10n.Printer, name, lab string) string {
	s, ok := lookup(name)
	if !ok || s.in(lab) {
		return ""
	}
	return p.Textf("switch %s belongs to lab %s; lab %s's controller does not use it", name, strings.Join(s.labs, ", "), lab)
}

// Names lists the switch names in a stable order.
func Names() []string { return namesIn("") }

// namesIn lists the names of the switches lab's controller reads ("":
// every switch).
func namesIn(lab string) []string {
	out := make([]string, 0, len(specs))
	for _, s := range specs {
		if s.in(lab) {
			out = append(out, s.name)
		}
	}
	return out
}

func lookup(name string) (spec, bool) {
	for _, s := range specs {
		if s.name == name {
			return s, true
		}
	}
	return spec{}, false
}

func unknownName(name, lab string) error {
	return fmt.Errorf("unknown switch %q (valid: %s)", name, strings.Join(namesIn(lab), ", "))
}

// parse validates text for the named switch of lab's controller ("":
// any) and applies it to v.
func parse(v *Values, lab, name, text string) error {
	if err := NotInLab(name, lab); err != nil {
		return err
	}
	s, _ := lookup(name)
	if valid := s.valid(); valid != nil {
		if !slices.Contains(valid, text) {
			return fmt.Errorf("switch %s: invalid value %q (valid: %s)", name, text, strings.Join(valid, ", "))
		}
		return s.set(v, text)
	}
	if err := s.set(v, text); err != nil {
		return fmt.Errorf("switch %s: invalid value %q: %w", name, text, err)
	}
	return nil
}

// Switches is the live, concurrency-safe set of switch values.
type Switches struct {
	mu      sync.RWMutex
	v       Values
	em      observe.Emitter
	started bool
	// lab is the lab whose controller reads these switches ("": every
	// switch may be set).
	lab string
}

// New returns switches at their Defaults that emit a "switch" event to em
// (nil: none) on every change. Every switch may be set; NewForLab only
// those a lab's controller reads.
func New(em observe.Emitter) *Switches { return NewForLab("", em) }

// NewForLab is New for the controller of lab: setting a switch it does not
// read (the breaker in lab 3.1, say) is an error that says which lab the
// switch belongs to, and Has reports it absent. Values still holds every
// field, at its default for a switch the lab does not read.
func NewForLab(lab string, em observe.Emitter) *Switches {
	if em == nil {
		em = observe.Discard
	}
	return &Switches{v: Defaults(), em: em, lab: lab}
}

// Has reports whether the lab's controller reads the named switch, so that
// a control for it does something.
func (s *Switches) Has(name string) bool { return InLab(name, s.lab) }

// Get returns a snapshot of every switch.
func (s *Switches) Get() Values {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.v
}

// Set changes one switch. Changing workers after MarkStarted is an error,
// since MaxConcurrentReconciles is fixed when a controller starts.
func (s *Switches) Set(name, value string) error {
	return s.apply([][2]string{{name, value}})
}

// Apply sets switches from "k=v,k=v" (spaces around items are ignored; an
// empty string changes nothing). It is all or nothing: if any item is
// invalid, no switch changes.
func (s *Switches) Apply(text string) error {
	pairs, err := ParsePairs(text)
	if err != nil {
		return err
	}
	return s.apply(pairs)
}

// ParsePairs splits "k=v,k=v" into pairs without validating names or values.
func ParsePairs(text string) ([][2]string, error) {
	var pairs [][2]string
	for _, item := range strings.Split(text, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, value, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("switch setting %q: want name=value (switches: %s)", item, strings.Join(Names(), ", "))
		}
		pairs = append(pairs, [2]string{strings.TrimSpace(name), strings.TrimSpace(value)})
	}
	return pairs, nil
}

func (s *Switches) apply(pairs [][2]string) error {
	s.mu.Lock()
	next := s.v
	for _, p := range pairs {
		if p[0] == NameWorkers && s.started {
			s.mu.Unlock()
			return fmt.Errorf("switch %s applies when the operator starts; restart it to change the number of workers", NameWorkers)
		}
		if err := parse(&next, s.lab, p[0], p[1]); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	prev := s.v
	s.v = next
	s.mu.Unlock()

	// Emit outside the lock, only for switches whose value changed.
	names := make([]string, 0, len(pairs))
	for _, p := range pairs {
		names = append(names, p[0])
	}
	sort.Strings(names)
	for i, name := range names {
		if i > 0 && names[i-1] == name {
			continue
		}
		before, _ := prev.Get(name)
		after, _ := next.Get(name)
		if before != after {
			s.em.Emit(observe.SwitchEvent(name, after))
		}
	}
	return nil
}

// MarkStarted records that the operator started: workers is fixed from now on.
func (s *Switches) MarkStarted() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started = true
}

// Scale divides d by the current timescale.
func (s *Switches) Scale(d time.Duration) time.Duration {
	return s.Get().Scale(d)
}
