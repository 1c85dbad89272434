package world

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator/switches"
)

// Errors the external system returns. Callers test them with errors.Is.
var (
	// ErrUnavailable: the system is down, or a flaky call failed.
	ErrUnavailable = errors.New("external system unavailable")
	// ErrRateLimited: the system refused the call because it came too soon
	// after the previous ones (its own rate limit, like an HTTP 429).
	ErrRateLimited = errors.New("external system rate limit exceeded")
)

// External call names, reported as the "op" of external events.
const (
	OpHealthCheck = "healthcheck"
	OpProvision   = "provision"
	OpPing        = "ping"
	OpDeprovision = "deprovision"
)

// External call outcomes, reported as the "outcome" of external events.
const (
	OutcomeOK          = "ok"
	OutcomeUnavailable = "unavailable"
	OutcomeRateLimited = "ratelimited"
	OutcomeCancelled   = "cancelled"
)

// Base latencies before timescale: a normal call is quick; a slow one takes
// long enough to tie up a worker visibly.
const (
	normalLatency = 5 * time.Millisecond
	slowLatency   = 2 * time.Second
	// ownRate is the simulated system's own rate limit in rate-limited mode
	// (calls per second at timescale 1), with ownBurst calls in a burst.
	ownRate  = 1
	ownBurst = 2
)

// External is the simulated external system. It is safe for concurrent use.
type External struct {
	sw *switches.Switches
	em observe.Emitter

	mu          sync.Mutex
	rng         *rand.Rand
	limiter     *rate.Limiter
	provisioned map[string]string // database key → endpoint
	serial      int               // databases ever provisioned: numbers endpoints uniquely
}

// NewExternal returns an external system driven by the switches (external,
// flakiness, timescale) that emits an "external" event per call to em. seed
// makes flaky failures reproducible.
func NewExternal(sw *switches.Switches, em observe.Emitter, seed uint64) *External {
	if em == nil {
		em = observe.Discard
	}
	return &External{
		sw:          sw,
		em:          em,
		rng:         rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		limiter:     rate.NewLimiter(ownRate, ownBurst),
		provisioned: map[string]string{},
	}
}

// HealthCheck reports whether the system is reachable and answering.
func (x *External) HealthCheck(ctx context.Context) error {
	return x.call(ctx, OpHealthCheck, nil)
}

// Provision creates the database named by key (namespace/name) and returns
// its endpoint. It is idempotent: provisioning the same key again returns
// the same endpoint.
func (x *External) Provision(ctx context.Context, key, databaseName string) (string, error) {
	var endpoint string
	err := x.call(ctx, OpProvision, func() {
		x.mu.Lock()
		defer x.mu.Unlock()
		if e, ok := x.provisioned[key]; ok {
			endpoint = e
			return
		}
		x.serial++
		endpoint = fmt.Sprintf("%s.db-%d.external.example:5432", databaseName, x.serial)
		x.provisioned[key] = endpoint
	})
	return endpoint, err
}

// Ping checks that a provisioned database answers at endpoint.
func (x *External) Ping(ctx context.Context, endpoint string) error {
	return x.call(ctx, OpPing, func() {})
}

// Deprovision drops the database named by key. Dropping one that is not
// there succeeds: a retry after a lost reply is safe.
func (x *External) Deprovision(ctx context.Context, key string) error {
	return x.call(ctx, OpDeprovision, func() {
		x.mu.Lock()
		defer x.mu.Unlock()
		delete(x.provisioned, key)
	})
}

// Provisioned returns how many databases are provisioned now.
func (x *External) Provisioned() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.provisioned)
}

// call simulates one round trip: latency, then an outcome chosen by the
// current switches; on success it runs effect.
func (x *External) call(ctx context.Context, op string, effect func()) error {
	v := x.sw.Get()
	start := time.Now()
	latency := normalLatency
	if v.External == switches.ExternalSlow {
		latency = slowLatency
	}
	err := sleep(ctx, v.Scale(latency))
	if err == nil {
		err = x.outcome(v)
	}
	if err == nil && effect != nil {
		effect()
	}
	observe.Emit(ctx, x.em, observe.ExternalEvent(observe.ExternalCall{
		Op:      op,
		Outcome: outcomeOf(err),
		Latency: time.Since(start),
		Error:   errText(err),
	}))
	if err != nil {
		return fmt.Errorf("external %s: %w", op, err)
	}
	return nil
}

func (x *External) outcome(v switches.Values) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	switch v.External {
	case switches.ExternalDown:
		return ErrUnavailable
	case switches.ExternalFlaky:
		if x.rng.Float64() < v.Flakiness {
			return ErrUnavailable
		}
	case switches.ExternalRateLimited:
		// The system's own limit speeds up with the timescale, like every
		// other delay in the simulation.
		x.limiter.SetLimit(rate.Limit(ownRate * v.Timescale))
		if !x.limiter.Allow() {
			return ErrRateLimited
		}
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func outcomeOf(err error) string {
	switch {
	case err == nil:
		return OutcomeOK
	case errors.Is(err, ErrRateLimited):
		return OutcomeRateLimited
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return OutcomeCancelled
	default:
		return OutcomeUnavailable
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
