package observe

import (
	"encoding/json"
	"fmt"
	"time"
)

// SchemaVersion is written into every event ("v") so readers of a recorded
// trace can tell which field set to expect.
const SchemaVersion = 1

// Kind names what happened. The values are part of the JSON Lines format.
type Kind string

// Event kinds, grouped by the layer that emits them.
const (
	KindWatch Kind = "watch"

	KindQueueAdd            Kind = "queue.add"
	KindQueueAddAfter       Kind = "queue.add_after"
	KindQueueAddRateLimited Kind = "queue.add_rate_limited"
	KindQueueGet            Kind = "queue.get"
	KindQueueDone           Kind = "queue.done"
	KindQueueForget         Kind = "queue.forget"

	KindReconcileStart Kind = "reconcile.start"
	KindReconcileEnd   Kind = "reconcile.end"

	KindClient Kind = "client"

	KindPhase     Kind = "phase"
	KindCondition Kind = "condition"
	KindBreaker   Kind = "breaker"
	KindBackoff   Kind = "backoff"
	KindRateLimit Kind = "ratelimit"
	KindExternal  Kind = "external"

	// KindSwitch reports a pattern switch changed on the running operator.
	KindSwitch Kind = "switch"
	// KindGate reports the step-through gate paused, resumed or stepped.
	KindGate Kind = "gate"
	// KindScenario marks the steps a scenario driver takes (create, update, ...).
	KindScenario Kind = "scenario"
	// KindSession opens the stream of a lab session: which lab, in which
	// namespace, so a reader of a trace (lab replay) need not guess.
	KindSession Kind = "session"
	// KindRunnerReady says a learner's runner (`lab start --mine`) has its
	// controller running, and names the switch of its simulated world.
	KindRunnerReady Kind = "runner.ready"
)

// Reconcile results as reported in reconcile.end "result".
const (
	ResultSuccess      = "success"
	ResultRequeue      = "requeue"
	ResultRequeueAfter = "requeue_after"
	ResultError        = "error"
	ResultTerminal     = "terminal"
)

// Client read sources.
const (
	SourceCache = "cache"
	SourceAPI   = "api"
)

// Client call outcomes.
const (
	OutcomeOK            = "ok"
	OutcomeNotFound      = "notfound"
	OutcomeConflict      = "conflict"
	OutcomeAlreadyExists = "alreadyexists"
	OutcomeError         = "error"
)

// Event is one observation. It is deliberately flat: one struct for every
// kind, with only the fields that kind uses filled in, so one encoder, one
// decoder and one renderer serve all of them. Some fields mean different
// things by kind; build events with the constructors (SwitchEvent,
// GateEvent, ...) and read those fields through the accessors (Switch,
// GateAction, ...) in kinds.go, which say what each kind puts where.
type Event struct {
	V          int       `json:"v"`
	Seq        uint64    `json:"seq"`
	Time       time.Time `json:"time"`
	Kind       Kind      `json:"kind"`
	Controller string    `json:"controller,omitempty"`
	Key        string    `json:"key,omitempty"`
	// ReconcileID ties client, phase, condition and other events to the
	// reconcile call that produced them.
	ReconcileID string `json:"reconcileID,omitempty"`
	// Cause is the seq of the watch event that led to this queue add.
	Cause uint64 `json:"cause,omitempty"`

	// watch: Type is ADDED|MODIFIED|DELETED|GENERIC; condition: the condition type.
	Type            string `json:"type,omitempty"`
	Object          string `json:"object,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
	Generation      int64  `json:"generation,omitempty"`

	// queue.*, backoff; breaker: how long until an open breaker probes
	Delay    Duration `json:"delay,omitempty"`
	Failures int      `json:"failures,omitempty"`
	Priority *int     `json:"priority,omitempty"`

	// reconcile.end
	Result       string   `json:"result,omitempty"`
	RequeueAfter Duration `json:"requeueAfter,omitempty"`
	Error        string   `json:"error,omitempty"`
	DurationMs   float64  `json:"durationMs,omitempty"`

	// client (Name: the object's; switch, runner.ready: the switch's;
	// scenario: the actor's)
	Verb    string `json:"verb,omitempty"`
	Name    string `json:"name,omitempty"`
	Source  string `json:"source,omitempty"`
	Outcome string `json:"outcome,omitempty"`

	// phase, breaker (read a breaker event through Breaker)
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`

	// condition
	Status  string `json:"status,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`

	// backoff (Attempt counts from 1)
	Attempt int `json:"attempt,omitempty"`
	// ratelimit (Calls: how many external calls the check was for; an old
	// trace, which has waits only, leaves it out)
	Wait  Duration `json:"wait,omitempty"`
	Calls int      `json:"calls,omitempty"`
	// external (Op: the call; scenario: the step)
	Op        string  `json:"op,omitempty"`
	LatencyMs float64 `json:"latencyMs,omitempty"`

	// switch: Name is the switch, Value its new value; gate: Value is the
	// GateAction; runner.ready: Name is the switch, Value its current value
	// and Values all it takes.
	Value  string   `json:"value,omitempty"`
	Values []string `json:"values,omitempty"`

	// session
	Lab       string `json:"lab,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

// Duration is a time.Duration that encodes as Go's duration text ("1.5s"),
// which people can read in a trace and programs can parse back.
type Duration time.Duration

// D returns the standard library duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String formats like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText encodes the duration as text; encoding/json quotes it. (Text
// rather than JSON marshalling spares encoding/json re-validating the output,
// a third of the cost of encoding an event.)
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(time.Duration(d).String()), nil
}

// UnmarshalJSON accepts duration text, or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n int64
		if err2 := json.Unmarshal(b, &n); err2 != nil {
			return fmt.Errorf("duration must be text like \"1.5s\": %w", err)
		}
		*d = Duration(n)
		return nil
	}
	parsed, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("parse duration %q: %w", s, err)
	}
	*d = Duration(parsed)
	return nil
}

// Emitter receives events. Implementations must never block the caller:
// events are emitted from inside reconciles and queue operations.
type Emitter interface {
	Emit(Event)
}

// Discard is an Emitter that drops everything, for code run without observation.
var Discard Emitter = discard{}

type discard struct{}

func (discard) Emit(Event) {}
