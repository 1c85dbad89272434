package observe

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// This file gives each kind its constructor and its accessors. Event stays
// flat for the wire, so some fields mean different things by kind (Name is
// a client call's object, a switch or a scenario's actor; Value a switch
// value or a gate action; Op an external call or a scenario step; Type a
// watch type or a condition type). Producers build events here and
// consumers read them here, so that mapping is written once. An accessor
// returns zero values for an event of another kind, so reading, say, a
// client event's Name as a switch name is impossible by construction.
//
// The wrappers' own kinds (watch, queue.*, reconcile.*) are built in the
// files that emit them, their only producers.

// ClientCall is what a client event reports.
type ClientCall struct {
	// Verb is get, list, create, update, patch, delete, status.update, ...
	Verb string
	// Object is the kind; Name the object's name ("" for a list).
	Object, Name string
	// Source is SourceCache or SourceAPI.
	Source string
	// Outcome is one of the Outcome* constants; Error the error's text.
	Outcome, Error string
}

// ClientEvent reports a client call.
func ClientEvent(c ClientCall) Event {
	return Event{Kind: KindClient, Verb: c.Verb, Object: c.Object, Name: c.Name,
		Source: c.Source, Outcome: c.Outcome, Error: c.Error}
}

// ClientCall returns what a client event reports.
func (e Event) ClientCall() ClientCall {
	if e.Kind != KindClient {
		return ClientCall{}
	}
	return ClientCall{Verb: e.Verb, Object: e.Object, Name: e.Name, Source: e.Source, Outcome: e.Outcome, Error: e.Error}
}

// WatchType returns a watch event's type (WatchAdded, WatchModified, ...).
func (e Event) WatchType() string {
	if e.Kind != KindWatch {
		return ""
	}
	return e.Type
}

// PhaseEvent reports a status phase change of the reconciled object.
func PhaseEvent(from, to string) Event {
	return Event{Kind: KindPhase, From: from, To: to}
}

// ConditionEvent reports a changed status condition: its type, status,
// reason and message (times and generations are left to the object).
func ConditionEvent(c metav1.Condition) Event {
	return Event{Kind: KindCondition, Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message}
}

// Condition returns the condition a condition event reports, with the
// fields the event carries: type, status, reason and message.
func (e Event) Condition() metav1.Condition {
	if e.Kind != KindCondition {
		return metav1.Condition{}
	}
	return metav1.Condition{Type: e.Type, Status: metav1.ConditionStatus(e.Status), Reason: e.Reason, Message: e.Message}
}

// BreakerUpdate is what a breaker event reports: a transition (From →
// State), a changed failure count, or a call the breaker refused.
type BreakerUpdate struct {
	// From is the state before a transition; "" when the state stayed.
	From string
	// State is the breaker's state after the event.
	State string
	// Failures is the consecutive failures the breaker counts.
	Failures int
	// ProbeIn is how long until an open breaker lets a probe through: its
	// cooldown when it opens, what is left of it when it refuses a call.
	// Zero when not reported (a learner's breaker, an old trace).
	ProbeIn time.Duration
	// Refused says the breaker refused a call, which was not made.
	Refused bool
}

// Transition reports whether the event is a change of state.
func (u BreakerUpdate) Transition() bool { return u.From != "" && u.From != u.State }

// breakerRefused is a breaker event's outcome when it refused a call.
const breakerRefused = "refused"

// BreakerEvent reports a circuit breaker transition, with the consecutive
// failures it had counted.
func BreakerEvent(from, to string, failures int) Event {
	return Event{Kind: KindBreaker, From: from, To: to, Failures: failures}
}

// BreakerOpenedEvent reports a breaker opening, with the failures that
// opened it and its cooldown: how long until it lets a probe through.
func BreakerOpenedEvent(from, to string, failures int, cooldown time.Duration) Event {
	e := BreakerEvent(from, to, failures)
	e.Delay = Duration(cooldown)
	return e
}

// BreakerCountEvent reports the breaker's count of consecutive failures
// changing without a change of state: one more failure, or a success
// that reset it.
func BreakerCountEvent(state string, failures int) Event {
	return Event{Kind: KindBreaker, To: state, Failures: failures}
}

// BreakerRefusedEvent reports a call the breaker refused (it was open, or
// another call's half-open probe was out), and how long until an open
// breaker lets a probe through.
func BreakerRefusedEvent(state string, failures int, probeIn time.Duration) Event {
	return Event{Kind: KindBreaker, To: state, Failures: failures, Delay: Duration(probeIn), Outcome: breakerRefused}
}

// Breaker returns what a breaker event reports.
func (e Event) Breaker() BreakerUpdate {
	if e.Kind != KindBreaker {
		return BreakerUpdate{}
	}
	return BreakerUpdate{From: e.From, State: e.To, Failures: e.Failures, ProbeIn: e.Delay.D(), Refused: e.Outcome == breakerRefused}
}

// BackoffEvent reports the delay a controller chose itself for its attempt
// (counted from 1) at something that failed.
func BackoffEvent(attempt int, delay time.Duration) Event {
	return Event{Kind: KindBackoff, Attempt: attempt, Delay: Duration(delay)}
}

// RateLimitCheck is what a ratelimit event reports: the rate limiter was
// asked for calls external calls at once, and let them go at once (Wait
// zero) or made them wait.
type RateLimitCheck struct {
	Calls int
	Wait  time.Duration
}

// RateLimitEvent reports a rate-limiter check before calls external calls:
// allowed at once (wait zero) or deferred by wait. Every check is
// reported, so that waits can be counted against all calls.
func RateLimitEvent(calls int, wait time.Duration) Event {
	return Event{Kind: KindRateLimit, Calls: calls, Wait: Duration(wait)}
}

// RateLimit returns the check a ratelimit event reports. A trace recorded
// before checks named their calls reported only waits, one call each.
func (e Event) RateLimit() RateLimitCheck {
	if e.Kind != KindRateLimit {
		return RateLimitCheck{}
	}
	return RateLimitCheck{Calls: max(e.Calls, 1), Wait: e.Wait.D()}
}

// ExternalCall is what an external event reports: one call to a system
// outside the cluster.
type ExternalCall struct {
	Op string
	// Outcome is OutcomeOK or the system's word for what went wrong.
	Outcome string
	Latency time.Duration
	Error   string
}

// ExternalEvent reports a call to an external system.
func ExternalEvent(c ExternalCall) Event {
	return Event{Kind: KindExternal, Op: c.Op, Outcome: c.Outcome,
		LatencyMs: float64(c.Latency.Microseconds()) / 1000, Error: c.Error}
}

// ExternalCall returns the call an external event reports.
func (e Event) ExternalCall() ExternalCall {
	if e.Kind != KindExternal {
		return ExternalCall{}
	}
	return ExternalCall{Op: e.Op, Outcome: e.Outcome,
		Latency: time.Duration(e.LatencyMs * float64(time.Millisecond)), Error: e.Error}
}

// SwitchEvent reports that a switch now has value.
func SwitchEvent(name, value string) Event {
	return Event{Kind: KindSwitch, Name: name, Value: value}
}

// Switch returns the switch a switch event reports and its new value.
func (e Event) Switch() (name, value string) {
	if e.Kind != KindSwitch {
		return "", ""
	}
	return e.Name, e.Value
}

// GateEvent reports what the step-through gate did; s names the reconcile
// it held or let through (zero for pause and resume, which concern them all).
func GateEvent(action GateAction, s Scope) Event {
	return Event{Kind: KindGate, Value: string(action), Controller: s.Controller, Key: s.Key, ReconcileID: s.ReconcileID}
}

// GateAction returns what a gate event reports the gate did.
func (e Event) GateAction() GateAction {
	if e.Kind != KindGate {
		return ""
	}
	return GateAction(e.Value)
}

// ScenarioStep is what a scenario event reports: one thing a scenario
// driver (or the person at the live view's keys) did.
type ScenarioStep struct {
	// Actor is the scenario's name, or who acts ("you" at the live view).
	Actor string
	// Step is what was done: start, create, update, delete, set, wait,
	// done, failed.
	Step string
	// Key is the object acted on, if any.
	Key string
	// Message says more: the switch set, what is waited for, the failure.
	Message string
}

// ScenarioEvent reports a scenario step.
func ScenarioEvent(s ScenarioStep) Event {
	return Event{Kind: KindScenario, Name: s.Actor, Op: s.Step, Key: s.Key, Message: s.Message}
}

// ScenarioStep returns the step a scenario event reports.
func (e Event) ScenarioStep() ScenarioStep {
	if e.Kind != KindScenario {
		return ScenarioStep{}
	}
	return ScenarioStep{Actor: e.Name, Step: e.Op, Key: e.Key, Message: e.Message}
}

// SessionEvent opens the stream of a lab session: the lab, and the
// namespace its objects live in.
func SessionEvent(lab, namespace string) Event {
	return Event{Kind: KindSession, Lab: lab, Namespace: namespace}
}

// Switch is a setting of a simulated world, as a learner's runner
// announces it: its name and the values it takes, the first being the
// initial one.
type Switch struct {
	Name   string
	Values []string
}

// RunnerReadyEvent says a learner's runner (`lab start --mine`) has its
// controller running: the switch of its simulated world (zero if it has
// none) and the switch's current value.
func RunnerReadyEvent(sw Switch, value string) Event {
	return Event{Kind: KindRunnerReady, Name: sw.Name, Values: append([]string(nil), sw.Values...), Value: value}
}

// RunnerReady returns the switch a runner.ready event announces and its
// current value.
func (e Event) RunnerReady() (sw Switch, value string) {
	if e.Kind != KindRunnerReady {
		return Switch{}, ""
	}
	return Switch{Name: e.Name, Values: append([]string(nil), e.Values...)}, e.Value
}
