package observe

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestReconcilerReportsResults(t *testing.T) {
	boom := errors.New("external system down")
	for _, tc := range []struct {
		name         string
		result       reconcile.Result
		err          error
		want         string
		requeueAfter time.Duration
		errText      string
	}{
		{name: "success", want: ResultSuccess},
		{name: "requeue", result: reconcile.Result{Requeue: true}, want: ResultRequeue}, //nolint:staticcheck // learners still write the deprecated Requeue; lab must name it
		{name: "requeue after", result: reconcile.Result{RequeueAfter: 30 * time.Second}, want: ResultRequeueAfter, requeueAfter: 30 * time.Second},
		{name: "error", err: boom, want: ResultError, errText: boom.Error()},
		{name: "terminal", err: reconcile.TerminalError(boom), want: ResultTerminal, errText: "terminal error: " + boom.Error()},
		// The controller ignores RequeueAfter when there is an error.
		{name: "error with requeue after", result: reconcile.Result{RequeueAfter: time.Minute}, err: boom, want: ResultError, requeueAfter: time.Minute, errText: boom.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBus()
			rec := NewRecorder(b)
			var seen Scope
			inner := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
				seen = ScopeFrom(ctx)
				Emit(ctx, b, Event{Kind: KindPhase, To: "Ready"})
				return tc.result, tc.err
			})
			res, err := Reconciler(b, "db", nil, inner).Reconcile(context.Background(), request("ns", "a"))
			if res != tc.result || !errors.Is(err, tc.err) {
				t.Fatalf("wrapper changed what the reconciler returned: %v, %v", res, err)
			}
			events := rec.Events()
			if len(events) != 3 || events[0].Kind != KindReconcileStart || events[1].Kind != KindPhase || events[2].Kind != KindReconcileEnd {
				t.Fatalf("events = %+v, want reconcile.start, phase, reconcile.end", events)
			}
			end := events[2]
			if end.Result != tc.want || end.RequeueAfter.D() != tc.requeueAfter || end.Error != tc.errText {
				t.Errorf("reconcile.end = result %q requeueAfter %v error %q; want %q %v %q",
					end.Result, end.RequeueAfter, end.Error, tc.want, tc.requeueAfter, tc.errText)
			}
			if seen.Controller != "db" || seen.Key != "ns/a" || seen.ReconcileID == "" {
				t.Errorf("inner reconciler saw scope %+v", seen)
			}
			for _, e := range events {
				if e.ReconcileID != seen.ReconcileID || e.Key != "ns/a" || e.Controller != "db" {
					t.Errorf("event not tied to the reconcile: %+v", e)
				}
			}
		})
	}
}

func TestReconcilerReportsPanicAndPassesItOn(t *testing.T) {
	b := NewBus()
	rec := NewRecorder(b)
	r := Reconciler(b, "db", nil, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		panic("nil map")
	}))
	func() {
		defer func() {
			if p := recover(); p != "nil map" {
				t.Errorf("recovered %v, want the original panic", p)
			}
		}()
		_, _ = r.Reconcile(context.Background(), request("ns", "a"))
	}()
	events := rec.Events()
	if len(events) != 2 || events[1].Result != ResultError || events[1].Error != "panic: nil map" {
		t.Fatalf("events = %+v, want start and an error end naming the panic", events)
	}
}

// gateHarness runs reconciles through a gated wrapper and records the order
// the inner reconciler saw them in.
type gateHarness struct {
	bus  *Bus
	rec  *Recorder
	gate *Gate
	r    reconcile.Reconciler

	mu  sync.Mutex
	ran []string
}

func newGateHarness() *gateHarness {
	h := &gateHarness{bus: NewBus(), gate: NewGate()}
	h.rec = NewRecorder(h.bus)
	h.r = Reconciler(h.bus, "db", h.gate, reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		h.mu.Lock()
		h.ran = append(h.ran, req.Name)
		h.mu.Unlock()
		return reconcile.Result{}, nil
	}))
	return h
}

func (h *gateHarness) ranSoFar() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.ran...)
}

func count(events []Event, match func(Event) bool) int {
	n := 0
	for _, e := range events {
		if match(e) {
			n++
		}
	}
	return n
}

func isKind(k Kind) func(Event) bool { return func(e Event) bool { return e.Kind == k } }

func isGate(action GateAction) func(Event) bool {
	return func(e Event) bool { return e.GateAction() == action }
}

// folded is the gate as its recorded events describe it.
func (h *gateHarness) folded() GateState {
	var g GateState
	for _, e := range h.rec.Events() {
		g.Apply(e)
	}
	return g
}

// checkFold: the fold of the gate's events agrees with the gate itself.
func (h *gateHarness) checkFold(t *testing.T, when string) {
	t.Helper()
	g := h.folded()
	if g.Paused != h.gate.Paused() || g.Waiting != h.gate.Waiting() {
		t.Errorf("%s: events say paused=%v waiting=%d, the gate paused=%v waiting=%d",
			when, g.Paused, g.Waiting, h.gate.Paused(), h.gate.Waiting())
	}
}

func (h *gateHarness) waitFor(t *testing.T, what string, match func(Event) bool, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.rec.WaitFor(ctx, func(ev []Event) bool { return count(ev, match) >= n }); err != nil {
		t.Fatalf("waiting for %d %s: %v", n, what, err)
	}
}

func TestGateStepsOneAtATimeInArrivalOrder(t *testing.T) {
	h := newGateHarness()
	h.gate.Pause()
	h.gate.Pause() // idempotent: one paused event
	if !h.gate.Paused() {
		t.Fatal("Paused() = false after Pause")
	}

	var wg sync.WaitGroup
	for i, name := range []string{"a", "b", "c"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := h.r.Reconcile(context.Background(), request("ns", name)); err != nil {
				t.Error(err)
			}
		}()
		h.waitFor(t, "workers waiting", isGate(GateWaiting), i+1) // fixes the arrival order
	}
	if got := h.gate.Waiting(); got != 3 {
		t.Fatalf("Waiting() = %d, want 3", got)
	}
	h.checkFold(t, "three held")
	if ran := h.ranSoFar(); len(ran) != 0 {
		t.Fatalf("reconciles ran through a paused gate: %v", ran)
	}

	for step := 1; step <= 2; step++ {
		h.gate.Step()
		if got := h.gate.Waiting(); got != 3-step {
			t.Fatalf("after %d steps Waiting() = %d, want %d", step, got, 3-step)
		}
		h.checkFold(t, fmt.Sprintf("after %d steps", step))
		h.waitFor(t, "reconciles", isKind(KindReconcileEnd), step)
		if ran := h.ranSoFar(); len(ran) != step {
			t.Fatalf("after %d steps %d reconciles ran: %v", step, len(ran), ran)
		}
	}
	h.gate.Resume()
	wg.Wait()

	if ran := h.ranSoFar(); len(ran) != 3 || ran[0] != "a" || ran[1] != "b" || ran[2] != "c" {
		t.Errorf("reconciles ran in order %v, want [a b c]", ran)
	}
	if h.gate.Waiting() != 0 || h.gate.Paused() {
		t.Errorf("after Resume: Waiting()=%d Paused()=%v", h.gate.Waiting(), h.gate.Paused())
	}
	h.checkFold(t, "after Resume")
	if g := h.folded(); g.Steps != 2 || !g.Seen {
		t.Errorf("folded %+v, want 2 steps seen", g)
	}
	var gateEvents []string
	for _, e := range h.rec.Events() {
		switch e.Kind {
		case KindGate:
			gateEvents = append(gateEvents, string(e.GateAction())+" "+e.Key)
		case KindReconcileStart:
			gateEvents = append(gateEvents, "start "+e.Key)
		}
	}
	want := []string{"paused ", "waiting ns/a", "waiting ns/b", "waiting ns/c",
		"step ns/a", "start ns/a", "step ns/b", "start ns/b", "resumed ", "start ns/c"}
	if len(gateEvents) != len(want) {
		t.Fatalf("gate and start events = %q, want %q", gateEvents, want)
	}
	for i := range want {
		if gateEvents[i] != want[i] {
			t.Errorf("event %d = %q, want %q (all: %q)", i, gateEvents[i], want[i], gateEvents)
		}
	}
}

func TestGateStepBeforeArrivalIsNotLost(t *testing.T) {
	h := newGateHarness()
	h.gate.Step() // open gate: no effect
	h.gate.Pause()
	h.gate.Step() // nobody waiting yet: the next arrival may pass
	if _, err := h.r.Reconcile(context.Background(), request("ns", "a")); err != nil {
		t.Fatal(err)
	}
	if n := count(h.rec.Events(), isGate(GateStep)); n != 1 {
		t.Errorf("%d step events, want 1", n)
	}
	h.checkFold(t, "a banked step spent") // the step released nobody who waited

	// The banked step is spent: the next reconcile waits.
	done := make(chan error, 1)
	go func() {
		_, err := h.r.Reconcile(context.Background(), request("ns", "b"))
		done <- err
	}()
	h.waitFor(t, "worker waiting", isGate(GateWaiting), 1)
	if ran := h.ranSoFar(); len(ran) != 1 {
		t.Fatalf("second reconcile ran without a step: %v", ran)
	}
	h.checkFold(t, "one held after the banked step")
	h.gate.Resume()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestGateWaitEndsWithContext(t *testing.T) {
	h := newGateHarness()
	h.gate.Pause()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := h.r.Reconcile(ctx, request("ns", "a"))
		done <- err
	}()
	h.waitFor(t, "worker waiting", isGate(GateWaiting), 1)
	cancel()
	err := <-done
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Reconcile returned %v, want context.Canceled", err)
	}
	if h.gate.Waiting() != 0 {
		t.Errorf("Waiting() = %d after the waiter left", h.gate.Waiting())
	}
	if n := len(h.ranSoFar()); n != 0 {
		t.Errorf("inner reconciler ran %d times for a cancelled wait", n)
	}
	// A step now must not be spent on the departed worker.
	h.gate.Step()
	if _, err := h.r.Reconcile(context.Background(), request("ns", "b")); err != nil {
		t.Fatal(err)
	}
}

// Run with -race: many workers, steps and resumes at once.
func TestGateConcurrentWorkers(t *testing.T) {
	h := newGateHarness()
	h.gate.Pause()
	const workers = 8
	var finished atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				if _, err := h.r.Reconcile(context.Background(), request("ns", "x")); err != nil {
					t.Error(err)
				}
			}
			finished.Add(1)
		}()
	}
	for i := 0; i < 40; i++ {
		h.gate.Step()
		_ = h.gate.Waiting()
	}
	h.gate.Resume()
	wg.Wait()
	if n := len(h.ranSoFar()); n != workers*20 {
		t.Errorf("%d reconciles ran, want %d", n, workers*20)
	}
	if finished.Load() != workers {
		t.Errorf("%d workers finished", finished.Load())
	}
}
