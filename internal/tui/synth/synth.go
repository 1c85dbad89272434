package synth

import (
	"fmt"
	"time"

	"github.com/operator-lab/lab/operator/api/v1alpha1"
	"github.com/operator-lab/lab/operator/database"
	"github.com/operator-lab/lab/operator/world"

	"github.com/operator-lab/lab/observe"
)

// Script accumulates events on a virtual clock.
type Script struct {
	Controller string
	now        time.Time
	seq        uint64
	reconciles int
	events     []observe.Event
}

// New starts a script whose clock reads start.
func New(controller string, start time.Time) *Script {
	return &Script{Controller: controller, now: start}
}

// Now is the script's clock.
func (s *Script) Now() time.Time { return s.now }

// Advance moves the clock forward.
func (s *Script) Advance(d time.Duration) { s.now = s.now.Add(d) }

// Events returns everything emitted so far.
func (s *Script) Events() []observe.Event { return s.events }

// Take returns the events emitted since the last Take (or the start) and forgets them.
func (s *Script) Take() []observe.Event {
	out := s.events
	s.events = nil
	return out
}

// Emit stamps e like the bus does (version, seq, time, controller) and records it.
func (s *Script) Emit(e observe.Event) observe.Event {
	s.seq++
	e.V, e.Seq = observe.SchemaVersion, s.seq
	if e.Time.IsZero() {
		e.Time = s.now
	}
	if e.Controller == "" {
		e.Controller = s.Controller
	}
	s.events = append(s.events, e)
	return e
}

// Watch emits a watch event and returns its seq, for Cause links.
func (s *Script) Watch(kind, key, typ string, generation int64) uint64 {
	return s.Emit(observe.Event{Kind: observe.KindWatch, Type: typ, Object: kind, Key: key, Generation: generation,
		ResourceVersion: fmt.Sprint(100 + s.seq)}).Seq
}

// Add emits a plain queue add caused by the watch event with seq cause (0: none).
func (s *Script) Add(key string, cause uint64) {
	prio := 0
	s.Emit(observe.Event{Kind: observe.KindQueueAdd, Key: key, Cause: cause, Priority: &prio})
}

// Step is something a reconcile does between start and end.
type Step func(s *Script, key, reconcileID string)

// Client is a client call.
func Client(verb, kind, name, source, outcome string) Step {
	return func(s *Script, key, id string) {
		s.Advance(300 * time.Microsecond)
		s.Emit(observe.Event{Kind: observe.KindClient, Key: key, ReconcileID: id, Verb: verb, Object: kind, Name: name, Source: source, Outcome: outcome})
	}
}

// Phase is a phase transition.
func Phase(from, to string) Step {
	return func(s *Script, key, id string) {
		s.Emit(observe.Event{Kind: observe.KindPhase, Key: key, ReconcileID: id, From: from, To: to})
	}
}

// Condition sets a condition.
func Condition(typ, status, reason string) Step {
	return func(s *Script, key, id string) {
		s.Emit(observe.Event{Kind: observe.KindCondition, Key: key, ReconcileID: id, Type: typ, Status: status, Reason: reason})
	}
}

// External is a call to the external system.
func External(op, outcome string, latency time.Duration) Step {
	return func(s *Script, key, id string) {
		s.Advance(latency)
		s.Emit(observe.Event{Kind: observe.KindExternal, Key: key, ReconcileID: id, Op: op, Outcome: outcome,
			LatencyMs: float64(latency) / float64(time.Millisecond)})
	}
}

// Breaker is a breaker transition; openFor is reported as the cooldown
// when it opens.
func Breaker(from, to string, failures int, openFor time.Duration) Step {
	return step(observe.BreakerOpenedEvent(from, to, failures, openFor))
}

// BreakerCount is the breaker's failure count changing in its state.
func BreakerCount(state string, failures int) Step {
	return step(observe.BreakerCountEvent(state, failures))
}

// BreakerRefused is the breaker refusing a call, the probe due in probeIn.
func BreakerRefused(state string, failures int, probeIn time.Duration) Step {
	return step(observe.BreakerRefusedEvent(state, failures, probeIn))
}

// Backoff is the lesson backoff choosing a delay.
func Backoff(attempt int, delay time.Duration) Step {
	return step(observe.BackoffEvent(attempt, delay))
}

// RateLimited is the rate limiter making one call wait.
func RateLimited(wait time.Duration) Step { return RateLimitCheck(1, wait) }

// RateLimitCheck is the rate limiter asked about calls calls: allowed at
// once (wait 0) or made to wait.
func RateLimitCheck(calls int, wait time.Duration) Step {
	return step(observe.RateLimitEvent(calls, wait))
}

// step emits e as a step of the reconcile.
func step(e observe.Event) Step {
	return func(s *Script, key, id string) {
		e.Key, e.ReconcileID = key, id
		s.Emit(e)
	}
}

// Outcome is how a reconcile ends.
type Outcome struct {
	Result       string
	RequeueAfter time.Duration // for requeue_after
	Error        string
	// Delay and Failures are what the rate limiter chose, for error and requeue.
	Delay    time.Duration
	Failures int
}

// Success, Error and After are the common outcomes.
var Success = Outcome{Result: observe.ResultSuccess}

// Failed is an error result whose retry the rate limiter delays.
func Failed(msg string, failures int, delay time.Duration) Outcome {
	return Outcome{Result: observe.ResultError, Error: msg, Failures: failures, Delay: delay}
}

// After is a RequeueAfter result.
func After(d time.Duration) Outcome {
	return Outcome{Result: observe.ResultRequeueAfter, RequeueAfter: d}
}

// Get dequeues key.
func (s *Script) Get(key string) {
	s.Advance(time.Millisecond)
	prio := 0
	s.Emit(observe.Event{Kind: observe.KindQueueGet, Key: key, Priority: &prio})
}

// Reconcile emits a dequeued key's reconcile: start, steps, end, then the
// queue calls controller-runtime v0.25 makes for that result, then Done.
// It returns the reconcile ID.
func (s *Script) Reconcile(key string, out Outcome, steps ...Step) string {
	s.reconciles++
	id := fmt.Sprintf("r%04d", s.reconciles)
	start := s.now
	s.Emit(observe.Event{Kind: observe.KindReconcileStart, Key: key, ReconcileID: id})
	for _, step := range steps {
		step(s, key, id)
	}
	s.Advance(200 * time.Microsecond)
	s.Emit(observe.Event{Kind: observe.KindReconcileEnd, Key: key, ReconcileID: id, Result: out.Result,
		RequeueAfter: observe.Duration(out.RequeueAfter), Error: out.Error,
		DurationMs: float64(s.now.Sub(start)) / float64(time.Millisecond)})
	switch out.Result {
	case observe.ResultError, observe.ResultRequeue:
		s.Emit(observe.Event{Kind: observe.KindQueueAddRateLimited, Key: key, Delay: observe.Duration(out.Delay), Failures: out.Failures})
	case observe.ResultRequeueAfter:
		s.Emit(observe.Event{Kind: observe.KindQueueForget, Key: key})
		s.Emit(observe.Event{Kind: observe.KindQueueAddAfter, Key: key, Delay: observe.Duration(out.RequeueAfter)})
	case observe.ResultSuccess:
		s.Emit(observe.Event{Kind: observe.KindQueueForget, Key: key})
	}
	s.Emit(observe.Event{Kind: observe.KindQueueDone, Key: key})
	return id
}

// DatabaseLifecycle emits a Database being created and walked through every
// phase to Ready the way the 4.4 reference operator does it: one reconcile
// per phase, each doing the work of the phase it is in (operator/database),
// persisting the next phase and returning Result{}; the status update's
// watch event brings the next reconcile.
func (s *Script) DatabaseLifecycle(key string) {
	name := nameOf(key)
	cause := s.Watch("Database", key, "ADDED", 1)
	s.Add(key, cause)
	phases := append([]v1alpha1.Phase{""}, v1alpha1.HappyPath...)
	for i := 1; i < len(phases); i++ {
		s.Get(key)
		steps := []Step{Client("get", "Database", name, observe.SourceCache, observe.OutcomeOK)}
		switch phases[i-1] {
		case v1alpha1.PhaseProvisioning:
			steps = append(steps, External(world.OpHealthCheck, observe.OutcomeOK, 20*time.Millisecond),
				External(world.OpProvision, observe.OutcomeOK, 40*time.Millisecond))
		case v1alpha1.PhaseConfiguring:
			steps = append(steps, Client("create", "Secret", database.SecretName(name), observe.SourceAPI, observe.OutcomeOK))
		case v1alpha1.PhaseDeploying:
			steps = append(steps, Client("create", "StatefulSet", database.WorkloadName(name), observe.SourceAPI, observe.OutcomeOK))
		case v1alpha1.PhaseVerifying:
			steps = append(steps, Client("get", "Secret", database.SecretName(name), observe.SourceCache, observe.OutcomeOK),
				Client("get", "StatefulSet", database.WorkloadName(name), observe.SourceCache, observe.OutcomeOK),
				External(world.OpPing, observe.OutcomeOK, 10*time.Millisecond),
				Condition(v1alpha1.ConditionReady, "True", v1alpha1.ReasonReconciled))
		}
		steps = append(steps, Phase(string(phases[i-1]), string(phases[i])),
			Client("status.update", "Database", name, observe.SourceAPI, observe.OutcomeOK))
		s.Reconcile(key, Success, steps...)
		w := s.Watch("Database", key, "MODIFIED", 1)
		s.Add(key, w)
		s.Advance(500 * time.Millisecond)
	}
	// The last MODIFIED leads to one more, idle, reconcile.
	s.Get(key)
	s.Reconcile(key, Success, Client("get", "Database", name, observe.SourceCache, observe.OutcomeOK))
}

func nameOf(key string) string {
	for i := len(key) - 1; i >= 0; i-- {
		if key[i] == '/' {
			return key[i+1:]
		}
	}
	return key
}

// Failures emits n reconciles of key that fail with an error, with the
// default controller rate limiter's delays (5ms·2ⁿ).
func (s *Script) Failures(key string, n int, msg string) {
	for i := 0; i < n; i++ {
		s.Get(key)
		delay := 5 * time.Millisecond << i
		s.Reconcile(key, Failed(msg, i+1, delay),
			Client("get", "Database", nameOf(key), observe.SourceCache, observe.OutcomeOK),
			External(world.OpHealthCheck, observe.OutcomeError, 20*time.Millisecond))
		s.Advance(delay)
	}
}
