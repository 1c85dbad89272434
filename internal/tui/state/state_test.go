package state_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/operator-lab/lab/internal/tui/state"
	"github.com/operator-lab/lab/internal/tui/synth"
	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator/world"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

const key = "lab/db-1"

func kinds(events []observe.Event) []observe.Kind {
	out := make([]observe.Kind, len(events))
	for i, e := range events {
		out[i] = e.Kind
	}
	return out
}

func TestRingKeepsNewestInOrder(t *testing.T) {
	r := state.NewRing[int](3)
	for i := 1; i <= 5; i++ {
		r.Push(i)
	}
	if got := fmt.Sprint(r.Slice()); got != "[3 4 5]" {
		t.Fatalf("ring = %s, want [3 4 5]", got)
	}
	if last, _ := r.Last(); last != 5 {
		t.Fatalf("last = %d", last)
	}
}

func TestReconcileSequenceLinksCauseQueueAndOutcome(t *testing.T) {
	sc := synth.New("database", t0)
	cause := sc.Watch("Database", key, "ADDED", 1)
	sc.Add(key, cause)
	sc.Get(key)
	sc.Reconcile(key, synth.After(2*time.Second),
		synth.Client("get", "Database", "db-1", observe.SourceCache, observe.OutcomeOK),
		synth.Phase("", "Pending"),
		synth.Client("status.update", "Database", "db-1", observe.SourceAPI, observe.OutcomeOK))

	s := state.New(state.Limits{})
	s.Apply(sc.Events()...)

	if s.ReconcileCount() != 1 {
		t.Fatalf("reconciles = %d, want 1", s.ReconcileCount())
	}
	r := s.ReconcileAt(0)
	if r.Trigger == nil || r.Trigger.Seq != cause || r.Trigger.Type != "ADDED" {
		t.Fatalf("trigger = %+v, want the ADDED watch event #%d", r.Trigger, cause)
	}
	if r.AddCount != 1 || r.Get == nil {
		t.Fatalf("adds = %d, get = %v", r.AddCount, r.Get)
	}
	if got := fmt.Sprint(kinds(r.Steps)); got != "[client phase client]" {
		t.Fatalf("steps = %s", got)
	}
	if got := fmt.Sprint(kinds(r.Outcome)); got != "[queue.forget queue.add_after]" {
		t.Fatalf("outcome = %s, want forget then add_after (RequeueAfter)", got)
	}
	if !r.Done || r.Result() != observe.ResultRequeueAfter {
		t.Fatalf("done=%v result=%q", r.Done, r.Result())
	}

	q, ok := s.QueueItem(key)
	if !ok || q.State != state.QueueDelayed || q.DelayedBy != state.ChosenByRequeueAfter {
		t.Fatalf("queue item = %+v, want delayed by RequeueAfter", q)
	}
	if want := r.End.Time.Add(2 * time.Second); !q.ReadyAt.Equal(want) {
		t.Fatalf("ready at %v, want %v", q.ReadyAt, want)
	}
	if got := q.StateAt(q.ReadyAt); got != state.QueueWaiting {
		t.Fatalf("at ready time the item is %q, want waiting", got)
	}

	series, ok := s.Series(key)
	if !ok || series.Retries.Len() != 1 {
		t.Fatalf("series = %+v", series)
	}
	if retry := series.Retries.At(0); retry.By != state.ChosenByRequeueAfter || retry.Delay != 2*time.Second {
		t.Fatalf("retry = %+v", retry)
	}
	o, ok := s.Object(key)
	if !ok || o.Kind != "Database" || o.Phase != "Pending" || o.Reconciles != 1 {
		t.Fatalf("object = %+v", o)
	}
}

func TestErrorsAreDelayedByTheRateLimiter(t *testing.T) {
	sc := synth.New("database", t0)
	sc.Add(key, sc.Watch("Database", key, "ADDED", 1))
	sc.Failures(key, 4, "external system down")

	s := state.New(state.Limits{})
	s.Apply(sc.Events()...)

	series, _ := s.Series(key)
	var delays []time.Duration
	for _, r := range series.Retries.Slice() {
		if r.By != state.ChosenByRateLimiter || r.Result != observe.ResultError {
			t.Fatalf("retry %+v, want an error delayed by the rate limiter", r)
		}
		delays = append(delays, r.Delay)
	}
	if got := fmt.Sprint(delays); got != "[5ms 10ms 20ms 40ms]" {
		t.Fatalf("delays = %s", got)
	}
	q, _ := s.QueueItem(key)
	if q.Failures != 4 || q.DelayedBy != state.ChosenByRateLimiter {
		t.Fatalf("queue item = %+v, want 4 failures", q)
	}
	if got := s.Totals().ByResult[observe.ResultError]; got != 4 {
		t.Fatalf("error results = %d", got)
	}
}

func TestLessonBackoffIsLabelledAsSuch(t *testing.T) {
	sc := synth.New("database", t0)
	sc.Add(key, 0)
	sc.Get(key)
	sc.Reconcile(key, synth.After(5*time.Second), synth.Backoff(1, 5*time.Second))

	s := state.New(state.Limits{})
	s.Apply(sc.Events()...)
	series, _ := s.Series(key)
	if r := series.Retries.At(0); r.By != state.ChosenByLesson || r.Attempt != 1 || r.Delay != 5*time.Second {
		t.Fatalf("retry = %+v, want lesson backoff attempt 1 of 5s", r)
	}
}

func TestTerminalErrorLeavesTheQueue(t *testing.T) {
	sc := synth.New("database", t0)
	sc.Add(key, 0)
	sc.Get(key)
	sc.Reconcile(key, synth.Outcome{Result: observe.ResultTerminal, Error: "invalid spec"})

	s := state.New(state.Limits{})
	s.Apply(sc.Events()...)
	if _, ok := s.QueueItem(key); ok {
		t.Fatal("a terminal error must not leave the key in the queue")
	}
	r := s.ReconcileAt(0)
	if len(r.Outcome) != 0 {
		t.Fatalf("terminal outcome = %v, want no queue calls", kinds(r.Outcome))
	}
	series, _ := s.Series(key)
	if got := series.Retries.At(0); got.Delay != 0 || got.Result != observe.ResultTerminal {
		t.Fatalf("retry = %+v", got)
	}
}

func TestWatchEventsWhileWaitingMergeIntoOneReconcile(t *testing.T) {
	sc := synth.New("database", t0)
	for gen := int64(1); gen <= 3; gen++ {
		sc.Add(key, sc.Watch("Database", key, "MODIFIED", gen))
	}
	s := state.New(state.Limits{})
	s.Apply(sc.Take()...)
	if q, _ := s.QueueItem(key); q.State != state.QueueWaiting || q.Adds != 3 {
		t.Fatalf("queue item = %+v, want waiting with 3 merged adds", q)
	}
	sc.Get(key)
	sc.Reconcile(key, synth.Success)
	s.Apply(sc.Take()...)
	if s.ReconcileCount() != 1 || s.ReconcileAt(0).AddCount != 3 {
		t.Fatalf("want one reconcile for three adds, got %d reconciles", s.ReconcileCount())
	}
	if o, _ := s.Object(key); o.Generation != 3 {
		t.Fatalf("generation = %d", o.Generation)
	}
}

func TestAddWhileInProgressRequeuesAfterDone(t *testing.T) {
	sc := synth.New("database", t0)
	sc.Add(key, 0)
	sc.Get(key)
	s := state.New(state.Limits{})
	s.Apply(sc.Take()...)
	if q, _ := s.QueueItem(key); q.State != state.QueueProcessing {
		t.Fatalf("after get: %q", q.State)
	}
	sc.Add(key, sc.Watch("Database", key, "MODIFIED", 2))
	sc.Reconcile(key, synth.Success)
	s.Apply(sc.Take()...)
	q, ok := s.QueueItem(key)
	if !ok || q.State != state.QueueWaiting {
		t.Fatalf("after done: %+v, want waiting again", q)
	}
	sc.Get(key)
	sc.Reconcile(key, synth.Success)
	s.Apply(sc.Take()...)
	if r := s.ReconcileAt(1); r.Trigger == nil || r.Trigger.Generation != 2 {
		t.Fatalf("second reconcile trigger = %+v, want the MODIFIED gen 2 event", r.Trigger)
	}
	if _, ok := s.QueueItem(key); ok {
		t.Fatal("after a success with nothing pending the key leaves the queue")
	}
}

func TestPhaseHistoryDurationsAndConditions(t *testing.T) {
	sc := synth.New("database", t0)
	sc.DatabaseLifecycle(key)
	s := state.New(state.Limits{})
	s.Apply(sc.Events()...)
	o, _ := s.Object(key)
	if o.Phase != "Ready" {
		t.Fatalf("phase = %q", o.Phase)
	}
	var path []string
	for _, c := range o.History.Slice() {
		path = append(path, c.To)
	}
	if got := fmt.Sprint(path); got != "[Pending Provisioning Configuring Deploying Verifying Ready]" {
		t.Fatalf("path = %s", got)
	}
	if c := o.History.At(2); c.From != "Provisioning" || c.InFrom <= 0 {
		t.Fatalf("transition = %+v, want a duration spent in Provisioning", c)
	}
	if len(o.Conditions) != 1 || o.Conditions[0].Type != "Ready" || o.Conditions[0].Status != "True" {
		t.Fatalf("conditions = %+v", o.Conditions)
	}

	sc.Emit(observe.Event{Kind: observe.KindCondition, Key: key, Type: "Ready", Status: "False", Reason: "Updating"})
	sc.Watch("Database", key, "DELETED", 2)
	s.Apply(sc.Take()...)
	if len(o.Conditions) != 1 || o.Conditions[0].Status != "False" {
		t.Fatalf("condition not replaced in place: %+v", o.Conditions)
	}
	if !o.Deleted {
		t.Fatal("DELETED watch event did not mark the object deleted")
	}
}

func TestBreakerRateLimitExternalGateAndSwitches(t *testing.T) {
	sc := synth.New("database", t0)
	sc.Add(key, 0)
	sc.Get(key)
	sc.Reconcile(key, synth.After(time.Second),
		synth.RateLimited(200*time.Millisecond),
		synth.External(world.OpHealthCheck, observe.OutcomeError, 10*time.Millisecond),
		synth.Breaker(state.BreakerClosed, state.BreakerOpen, 5, 30*time.Second))
	sc.Emit(observe.SwitchEvent("requeue", "after"))
	sc.Emit(observe.SwitchEvent("breaker", "on"))
	sc.Emit(observe.SwitchEvent("requeue", "error"))
	// A learner's runner announces its world's switch when it is ready.
	sc.Emit(observe.RunnerReadyEvent(observe.Switch{Name: "external", Values: []string{"healthy", "down"}}, "healthy"))
	sc.Emit(observe.GateEvent(observe.GatePaused, observe.Scope{}))

	s := state.New(state.Limits{})
	s.Apply(sc.Events()...)

	b := s.Breaker()
	if b.State != state.BreakerOpen || b.Failures != 5 || b.ProbeAt.Sub(b.Since) != 30*time.Second {
		t.Fatalf("breaker = %+v", b)
	}
	if rl := s.RateLimit(); rl.Delayed != 1 || rl.LastWait != 200*time.Millisecond {
		t.Fatalf("rate limit = %+v", rl)
	}
	if x := s.External(); x.Failed != 1 || x.OK != 0 || x.Calls.Len() != 1 {
		t.Fatalf("external = %+v", x)
	}
	names, values := s.Switches()
	if fmt.Sprint(names) != "[requeue breaker external]" || values["requeue"] != "error" || values["external"] != "healthy" {
		t.Fatalf("switches = %v %v", names, values)
	}
	if !s.Gate().Paused {
		t.Fatal("gate not paused")
	}
}

// TestMemoryIsBounded floods the state with far more events, keys and
// reconciles than any limit and checks every history stayed within it.
func TestMemoryIsBounded(t *testing.T) {
	lim := state.DefaultLimits()
	s := state.New(lim)
	sc := synth.New("database", t0)
	for i := 0; i < 3000; i++ {
		k := fmt.Sprintf("flood/db-%d", i)
		sc.Add(k, sc.Watch("Database", k, "ADDED", 1))
		if i%3 == 0 {
			continue // leave some keys waiting in the queue
		}
		sc.Get(k)
		sc.Reconcile(k, synth.Failed("boom", 1, 5*time.Millisecond),
			synth.Client("get", "Database", k, observe.SourceCache, observe.OutcomeOK),
			synth.External(world.OpHealthCheck, observe.OutcomeError, time.Millisecond),
			synth.RateLimited(time.Millisecond))
		s.Apply(sc.Take()...)
	}
	s.Apply(sc.Take()...)
	if s.ReconcileCount() > lim.Reconciles {
		t.Errorf("reconciles %d > %d", s.ReconcileCount(), lim.Reconciles)
	}
	if s.ObjectCount() > lim.Objects {
		t.Errorf("objects %d > %d", s.ObjectCount(), lim.Objects)
	}
	if n := len(s.Queue(sc.Now())); n > lim.Keys {
		t.Errorf("queue items %d > %d", n, lim.Keys)
	}
	if s.QueueOverflow() == 0 {
		t.Error("expected untracked adds beyond the key limit to be counted")
	}
	if n := len(s.AllSeries()); n > lim.Keys {
		t.Errorf("series %d > %d", n, lim.Keys)
	}
	if s.LogLen() > lim.Log {
		t.Errorf("log %d > %d", s.LogLen(), lim.Log)
	}
	if got := s.Totals().Reconciles; got != 2000 {
		t.Errorf("total reconciles = %d, want 2000 (totals count what the rings forgot)", got)
	}
}

// TestGateFollowsTheGatesOwnEvents folds the events a real observe.Gate
// emits: paused, a worker waiting, a step, resumed.
func TestGateFollowsTheGatesOwnEvents(t *testing.T) {
	s := state.New(state.Limits{})
	held := observe.Scope{Controller: "database", Key: key}
	gate := func(action observe.GateAction, at time.Duration) {
		e := observe.GateEvent(action, held)
		e.Time = t0.Add(at)
		s.Apply(e)
	}
	gate(observe.GatePaused, 0)
	gate(observe.GateWaiting, time.Second)
	gate(observe.GateWaiting, 2*time.Second)
	if g := s.Gate(); !g.Paused || g.Waiting != 2 || !g.Since.Equal(t0) {
		t.Fatalf("after pause and two held: %+v", g)
	}
	gate(observe.GateStep, 3*time.Second)
	if g := s.Gate(); !g.Paused || g.Steps != 1 || g.Waiting != 1 {
		t.Fatalf("after pause, two held, a step: %+v", g)
	}
	gate(observe.GateResumed, 4*time.Second)
	if g := s.Gate(); g.Paused || g.Steps != 1 || g.Waiting != 0 || !g.Since.Equal(t0.Add(4*time.Second)) {
		t.Fatalf("after resume: %+v", g)
	}
}

// TestBreakerFollowsCountsRefusalsAndTransitions: every failure moves the
// count; each refusal says anew when the probe comes; a count in a state
// whose transition was dropped is believed.
func TestBreakerFollowsCountsRefusalsAndTransitions(t *testing.T) {
	s := state.New(state.Limits{})
	at := func(d time.Duration, e observe.Event) observe.Event { e.Time = t0.Add(d); return e }
	s.Apply(
		at(0, observe.BreakerCountEvent(state.BreakerClosed, 1)),
		at(time.Second, observe.BreakerCountEvent(state.BreakerClosed, 2)),
	)
	if b := s.Breaker(); b.State != state.BreakerClosed || b.Failures != 2 || b.Transitions != 0 {
		t.Fatalf("after two failures: %+v", b)
	}
	s.Apply(
		at(2*time.Second, observe.BreakerOpenedEvent(state.BreakerClosed, state.BreakerOpen, 3, 6*time.Second)),
		at(5*time.Second, observe.BreakerRefusedEvent(state.BreakerOpen, 3, 2500*time.Millisecond)),
	)
	b := s.Breaker()
	if b.State != state.BreakerOpen || b.Refused != 1 || !b.ProbeAt.Equal(t0.Add(7500*time.Millisecond)) || b.Transitions != 1 {
		t.Fatalf("open, one refusal: %+v", b)
	}
	// The half-open and closed transitions were dropped: a count in the
	// closed state is believed.
	s.Apply(at(9*time.Second, observe.BreakerCountEvent(state.BreakerClosed, 1)))
	if b := s.Breaker(); b.State != state.BreakerClosed || b.Failures != 1 || !b.ProbeAt.IsZero() {
		t.Fatalf("after a count in the closed state: %+v", b)
	}
}

// TestRateLimitCountsCallsNotEvents: a check names its calls; a trace from
// before every check was reported has waits only, one call each.
func TestRateLimitCountsCallsNotEvents(t *testing.T) {
	s := state.New(state.Limits{})
	s.Apply(observe.RateLimitEvent(2, 0), observe.RateLimitEvent(3, time.Second), observe.RateLimitEvent(1, 0))
	if rl := s.RateLimit(); rl.Calls != 6 || rl.Waited != 3 || rl.Checks != 3 || rl.Delayed != 1 || !rl.EveryCall || rl.LastWait != time.Second {
		t.Fatalf("rate limit = %+v", rl)
	}
	old := state.New(state.Limits{})
	old.Apply(observe.Event{Kind: observe.KindRateLimit, Wait: observe.Duration(time.Second)})
	if rl := old.RateLimit(); rl.Calls != 1 || rl.Waited != 1 || rl.EveryCall {
		t.Fatalf("old trace: %+v", rl)
	}
}

// TestTriggerThatKeptTheGenerationIsMarked: a MODIFIED event with the
// generation the object already had (a status write) is told apart from
// one that changed the spec, so the view can say why a reconcile ran
// although nothing the controller reads changed.
func TestTriggerThatKeptTheGenerationIsMarked(t *testing.T) {
	sc := synth.New("database", t0)
	for _, w := range []struct {
		typ string
		gen int64
	}{{"ADDED", 1}, {"MODIFIED", 1}, {"MODIFIED", 2}, {"MODIFIED", 2}} {
		sc.Add(key, sc.Watch("Database", key, w.typ, w.gen))
		sc.Get(key)
		sc.Reconcile(key, synth.Success)
	}
	s := state.New(state.Limits{})
	s.Apply(sc.Events()...)
	var got []bool
	for _, r := range s.Reconciles() {
		got = append(got, r.TriggerKeptGeneration)
	}
	if fmt.Sprint(got) != "[false true false true]" {
		t.Fatalf("kept generation per reconcile = %v, want [false true false true] (ADDED 1, MODIFIED 1, MODIFIED 2, MODIFIED 2)", got)
	}
}
