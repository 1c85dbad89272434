// Package breaker is exercise 5: a circuit breaker that is safe for many
// workers at once, with a clock the tests can move.
package breaker

import (
	"errors"
	"sync"
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
type Breaker struct {
	threshold int
	cooldown  time.Duration
	clock     Clock

	mu       sync.Mutex
	state    State
	failures int
	openedAt time.Time
	probing  bool
}

// New returns a closed breaker.
func New(threshold int, cooldown time.Duration, clock Clock) *Breaker {
	return &Breaker{threshold: threshold, cooldown: cooldown, clock: clock, state: Closed}
}

// State returns the current state (an open breaker whose cooldown ended
// reports half-open).
func (b *Breaker) State() State {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.coolDown()
	return b.state
}

// Allow asks to make one call. ErrOpen means: do not call. Otherwise make
// the call and report its outcome with done.
func (b *Breaker) Allow() (done func(success bool), err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.coolDown()
	switch b.state {
	case Open:
		return nil, ErrOpen
	case HalfOpen:
		if b.probing {
			return nil, ErrOpen // one probe at a time
		}
		b.probing = true
		return b.doneFunc(true), nil
	default:
		return b.doneFunc(false), nil
	}
}

// coolDown moves an open breaker to half-open once the cooldown is over.
// The caller holds mu.
func (b *Breaker) coolDown() {
	if b.state == Open && !b.clock.Now().Before(b.openedAt.Add(b.cooldown)) {
		b.state, b.probing = HalfOpen, false
	}
}

func (b *Breaker) doneFunc(probe bool) func(bool) {
	var once sync.Once
	return func(success bool) {
		once.Do(func() { b.record(probe, success) })
	}
}

func (b *Breaker) record(probe, success bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case probe && b.state == HalfOpen:
		b.probing = false
		if success {
			b.state, b.failures = Closed, 0
		} else {
			b.trip()
		}
	case !probe && b.state == Closed:
		if success {
			b.failures = 0
		} else if b.failures++; b.failures >= b.threshold {
			b.trip()
		}
	}
	// Any other outcome changes nothing: a call that was not the probe and
	// returns while the breaker is open or half-open was admitted before
	// it opened, so it can neither close it nor decide for the probe. One
	// admitted in an earlier closed spell that returns after the breaker
	// closed again does still count above; a breaker that tags each
	// admission with a generation (as the reference operator's does)
	// ignores that one too.
}

func (b *Breaker) trip() {
	b.state, b.openedAt, b.failures = Open, b.clock.Now(), 0
}
