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
	Seen     bool
	State    string
	Failures int
	Since    time.Time
	// ProbeAt is when an open breaker lets a probe through, when the
	// operator reported its open timeout (in the event's delay).
	ProbeAt     time.Time
	Transitions int
	History     *Ring[BreakerChange]
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
	LastWait        time.Duration
	LastAt          time.Time
	Waits           *Ring[time.Duration]
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
	b.Seen = true
	b.Failures = e.Failures
	if e.To == "" || (e.To == b.State && e.From == "") {
		return // a failure count update without a transition
	}
	b.History.Push(BreakerChange{From: e.From, To: e.To, Failures: e.Failures, At: e.Time})
	b.Transitions++
	b.State, b.Since = e.To, e.Time
	b.ProbeAt = time.Time{}
	if e.To == BreakerOpen && e.Delay > 0 {
		b.ProbeAt = e.Time.Add(e.Delay.D())
	}
}

func (s *State) onRateLimit(e observe.Event) {
	r := &s.rateLimit
	r.Seen = true
	r.Checks++
	r.LastWait, r.LastAt = e.Wait.D(), e.Time
	if e.Wait > 0 {
		r.Delayed++
	}
	r.Waits.Push(e.Wait.D())
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
