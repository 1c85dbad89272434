// Package breaker is exercise 5: a circuit breaker that is safe for many
// workers at once, with a clock the tests can move.
package breaker

import (
	"errors"
	"time"
)

// State is the breaker's state.
type State string

// The states.
const (
	Closed   State = "closed"    // calls go through; failures are counted
	Open     State = "open"      // calls are refused until the cooldown ends
	HalfOpen State = "half-open" // one probe call decides: closed again, or open
)

// ErrOpen refuses a call.
var ErrOpen = errors.New("circuit breaker is open")

// Clock tells the time; tests pass one they control.
type Clock interface{ Now() time.Time }

// RealClock is the wall clock.
type RealClock struct{}

// Now returns the current time.
func (RealClock) Now() time.Time { return time.Now() }

// Breaker opens after Threshold consecutive failures, stays open for
// Cooldown, then lets one probe through.
//
// TODO(lab): many reconcile workers share one breaker: guard its fields.
type Breaker struct {
	threshold int
	cooldown  time.Duration
	clock     Clock

	state    State
	failures int
	openedAt time.Time
}

// New returns a closed breaker.
func New(threshold int, cooldown time.Duration, clock Clock) *Breaker {
	return &Breaker{threshold: threshold, cooldown: cooldown, clock: clock, state: Closed}
}

// State returns the current state (an open breaker whose cooldown ended
// reports half-open).
func (b *Breaker) State() State {
	if b.state == Open && b.clock.Now().After(b.openedAt.Add(b.cooldown)) {
		return HalfOpen
	}
	return b.state
}

// Allow asks to make one call. ErrOpen means: do not call. Otherwise make
// the call and report its outcome with done.
//
// TODO(lab): in half-open only ONE probe may be in flight; this lets every
// caller through. And is "After" right when exactly Cooldown has passed?
func (b *Breaker) Allow() (done func(success bool), err error) {
	if b.State() == Open {
		return nil, ErrOpen
	}
	return func(success bool) {
		if success {
			b.state, b.failures = Closed, 0
			return
		}
		b.failures++
		if b.failures >= b.threshold {
			b.state, b.openedAt = Open, b.clock.Now()
		}
	}, nil
}
