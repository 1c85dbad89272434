package state

import (
	"time"

	"github.com/operator-lab/lab/observe"
)

// Breaker states, as the operator reports them in breaker events.
const (
	BreakerClosed   = "closed"
	BreakerOpen     = "open"
	BreakerHalfOpen = "half-open"
)

// Breaker is the circuit breaker in front of the external system.
type Breaker struct {
	// Seen is set once any breaker event arrived.
	Seen bool
	// State is the state now; Failures the consecutive failures it counts,
	// as of the last event (each failure reports the new count).
	State    string
	Failures int
	Since    time.Time
	// ProbeAt is when an open breaker lets a probe through, when the
	// operator reported it (its cooldown on opening, what was left of it
	// on each refusal).
	ProbeAt     time.Time
	Transitions int
	// Refused counts the calls the breaker refused.
	Refused int
	History *Ring[BreakerChange]
}

// BreakerChange is one breaker transition.
type BreakerChange struct {
	From, To string
	Failures int
	At       time.Time
}

// RateLimit summarises the rate limiter in front of the external system.
type RateLimit struct {
	Seen bool
	// Checks counts ratelimit events; Delayed those that had to wait.
	Checks, Delayed int
	// Calls counts the external calls the limiter was asked about, Waited
	// those it made wait. EveryCall says the stream reports every check; a
	// trace recorded when only waits were reported leaves the calls let
	// through uncounted, so Calls is only its waits.
	Calls, Waited int
	EveryCall     bool
	// LastWait is the last wait, at LastAt.
	LastWait time.Duration
	LastAt   time.Time
	Waits    *Ring[time.Duration]
}

// External summarises calls to the (simulated) external system.
type External struct {
	Seen       bool
	OK, Failed int
	Calls      *Ring[ExternalCall]
}

// ExternalCall is one call to the external system.
type ExternalCall struct {
	Op, Outcome string
	Latency     time.Duration
	At          time.Time
	Error       string
}

// Succeeded reports whether the call worked.
func (c ExternalCall) Succeeded() bool {
	return c.Outcome == "" || c.Outcome == observe.OutcomeOK
}

// Gate is the step-through gate as gate events describe it: observe's one
// fold of them, which lab's side of a learner's controller keeps too.
type Gate = observe.GateState

// Breaker returns the breaker state.
func (s *State) Breaker() Breaker { return s.breaker }

// RateLimit returns the rate limiter state.
func (s *State) RateLimit() RateLimit { return s.rateLimit }

// External returns the external system state.
func (s *State) External() External { return s.external }

// Gate returns the step-through gate state.
func (s *State) Gate() Gate { return s.gate }

func (s *State) onBreaker(e observe.Event) {
	b := &s.breaker
	u := e.Breaker()
	b.Seen = true
	b.Failures = u.Failures
	if u.Refused {
		b.Refused++
	}
	switch {
	case u.Transition():
		b.History.Push(BreakerChange{From: u.From, To: u.State, Failures: u.Failures, At: e.Time})
		b.Transitions++
		b.State, b.Since = u.State, e.Time
		b.ProbeAt = time.Time{}
	case u.State != "" && u.State != b.State:
		// A count or a refusal in a state no transition announced (the
		// transition's event was dropped): believe the newer event.
		b.State, b.Since = u.State, e.Time
		b.ProbeAt = time.Time{}
	}
	if b.State == BreakerOpen && u.ProbeIn > 0 {
		b.ProbeAt = e.Time.Add(u.ProbeIn)
	}
}

func (s *State) onRateLimit(e observe.Event) {
	r := &s.rateLimit
	c := e.RateLimit()
	r.Seen = true
	r.Checks++
	r.Calls += c.Calls
	r.EveryCall = r.EveryCall || e.Calls > 0
	if c.Wait > 0 {
		r.Delayed++
		r.Waited += c.Calls
		r.LastWait, r.LastAt = c.Wait, e.Time
		r.Waits.Push(c.Wait)
	}
}

func (s *State) onExternal(e observe.Event) {
	x := &s.external
	x.Seen = true
	call := e.ExternalCall()
	c := ExternalCall{Op: call.Op, Outcome: call.Outcome, Latency: call.Latency, At: e.Time, Error: call.Error}
	if c.Succeeded() {
		x.OK++
	} else {
		x.Failed++
	}
	x.Calls.Push(c)
}

// onGate follows the gate's own events; a waiting worker is counted here
// and shown in the queue pane as well.
func (s *State) onGate(e observe.Event) { s.gate.Apply(e) }
