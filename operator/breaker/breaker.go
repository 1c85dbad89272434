package breaker

import (
	"context"
	"errors"
	"sync"
	"time"
)

// State is the breaker's state.
type State string

const (
	Closed   State = "closed"
	Open     State = "open"
	HalfOpen State = "half-open"
)

// ErrOpen is returned, without calling the function, while the breaker is
// open or while another caller's half-open probe is in flight.
var ErrOpen = errors.New("circuit breaker open")

// Transition describes a state change, for observers.
type Transition struct {
	From, To State
	// Failures is the consecutive failure count at the time of the change.
	Failures int
	// Cooldown is, for a change to Open, how long the breaker stays open
	// before it lets a probe through.
	Cooldown time.Duration
}

// Refusal describes a call the breaker refused, for observers.
type Refusal struct {
	// State is Open, or HalfOpen while another caller's probe is out.
	State    State
	Failures int
	// ProbeIn is how long until an open breaker lets a probe through
	// (zero while half-open: the probe is already out).
	ProbeIn time.Duration
}

// Options configure a Breaker.
type Options struct {
	// Threshold is the number of consecutive failures that opens the breaker (default 5).
	Threshold int
	// OpenTimeout returns how long the breaker stays open before it lets a
	// probe through; read on every check so it can follow a changing
	// timescale (default: one minute).
	OpenTimeout func() time.Duration
	// Now is the clock (default time.Now); tests inject a fake one.
	Now func() time.Time
	// OnTransition, if set, is called on every state change with the context
	// of the call that caused it. It runs under the breaker's lock, so
	// transitions are reported in order; it must be quick and must not call
	// the breaker.
	OnTransition func(ctx context.Context, t Transition)
	// OnFailureCount, if set, is called when the count of consecutive
	// failures changes without a change of state: a failure below the
	// threshold, or a success that resets the count. Like OnTransition it
	// runs under the lock with the call's context.
	OnFailureCount func(ctx context.Context, state State, failures int)
	// OnRefuse, if set, is called for every call the breaker refuses
	// (returning ErrOpen without running it), under the lock, with the
	// refused call's context.
	OnRefuse func(ctx context.Context, r Refusal)
	// IsFailure decides which errors count against the breaker (default: every
	// non-nil error). A caller's own cancellation, say, should not open it.
	IsFailure func(error) bool
}

// Breaker is a concurrency-safe circuit breaker. The zero value is not
// usable; call New.
type Breaker struct {
	opts Options

	mu    sync.Mutex
	state State
	// generation counts state changes. Every admitted call carries the
	// generation it was admitted in, and its outcome counts only if the
	// breaker is still in that generation: a call admitted while closed
	// that returns after the breaker opened (or opened, probed and closed
	// again) is late, and says nothing about the state now.
	generation uint64
	failures   int
	openedAt   time.Time
	probing    bool
}

// New returns a closed breaker.
func New(opts Options) *Breaker {
	if opts.Threshold <= 0 {
		opts.Threshold = 5
	}
	if opts.OpenTimeout == nil {
		opts.OpenTimeout = func() time.Duration { return time.Minute }
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.IsFailure == nil {
		opts.IsFailure = func(err error) bool { return err != nil }
	}
	return &Breaker{opts: opts, state: Closed}
}

// State returns the current state and consecutive failure count. An open
// breaker whose timeout has passed still reports Open until a caller arrives
// to probe.
func (b *Breaker) State() (State, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state, b.failures
}

// Call runs fn if the breaker allows it and records the outcome. It returns
// ErrOpen without running fn when the breaker refuses the call.
func (b *Breaker) Call(ctx context.Context, fn func(context.Context) error) error {
	a, err := b.allow(ctx)
	if err != nil {
		return err
	}
	err = fn(ctx)
	b.record(ctx, a, err)
	return err
}

// admission is what allow hands an admitted call: the generation it was
// admitted in, and whether it is the single half-open probe.
type admission struct {
	generation uint64
	probe      bool
}

// allow decides whether a call may go ahead.
func (b *Breaker) allow(ctx context.Context) (admission, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case Open:
		if left := b.opts.OpenTimeout() - b.opts.Now().Sub(b.openedAt); left > 0 {
			b.refuseLocked(ctx, left)
			return admission{}, ErrOpen
		}
		b.setLocked(ctx, HalfOpen)
		b.probing = true
		return admission{generation: b.generation, probe: true}, nil
	case HalfOpen:
		if b.probing {
			b.refuseLocked(ctx, 0)
			return admission{}, ErrOpen
		}
		b.probing = true
		return admission{generation: b.generation, probe: true}, nil
	}
	return admission{generation: b.generation}, nil
}

// record applies a call's outcome, unless the call is late: admitted in an
// earlier generation. Without that check a late success would close an open
// breaker, and a late failure would count against a breaker that has closed
// again since (or, in a breaker that reopens on any failure while half-open,
// reopen it while the probe is still out).
func (b *Breaker) record(ctx context.Context, a admission, callErr error) {
	failed := b.opts.IsFailure(callErr)
	b.mu.Lock()
	defer b.mu.Unlock()
	if a.generation != b.generation {
		return
	}
	switch {
	case a.probe && callErr != nil && !failed:
		// The probe was abandoned (cancelled, say): it proved nothing, so
		// stay half-open and let the next caller probe.
		b.probing = false
	case a.probe:
		b.probing = false
		if failed {
			b.failures++
			b.openedAt = b.opts.Now()
			b.setLocked(ctx, Open)
		} else {
			b.failures = 0
			b.setLocked(ctx, Closed)
		}
	case failed:
		b.failures++
		if b.failures >= b.opts.Threshold {
			b.openedAt = b.opts.Now()
			b.setLocked(ctx, Open)
		} else {
			b.countedLocked(ctx)
		}
	case callErr == nil && b.failures > 0:
		b.failures = 0
		b.countedLocked(ctx)
	}
}

func (b *Breaker) setLocked(ctx context.Context, to State) {
	if b.state == to {
		return
	}
	t := Transition{From: b.state, To: to, Failures: b.failures}
	if to == Open {
		t.Cooldown = b.opts.OpenTimeout()
	}
	b.state = to
	b.generation++
	if b.opts.OnTransition != nil {
		b.opts.OnTransition(ctx, t)
	}
}

// countedLocked reports a changed failure count in the same state.
func (b *Breaker) countedLocked(ctx context.Context) {
	if b.opts.OnFailureCount != nil {
		b.opts.OnFailureCount(ctx, b.state, b.failures)
	}
}

// refuseLocked reports a refused call.
func (b *Breaker) refuseLocked(ctx context.Context, probeIn time.Duration) {
	if b.opts.OnRefuse != nil {
		b.opts.OnRefuse(ctx, Refusal{State: b.state, Failures: b.failures, ProbeIn: probeIn})
	}
}
