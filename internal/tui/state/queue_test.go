package state_test

import (
	"testing"

	"github.com/operator-lab/lab/internal/tui/state"
	"github.com/operator-lab/lab/internal/tui/synth"
	"github.com/operator-lab/lab/observe"
)

// TestDequeuedIsNotRunning: a key a worker took whose reconcile has not
// started (a paused gate holds it) is counted apart from running ones,
// until its reconcile starts.
func TestDequeuedIsNotRunning(t *testing.T) {
	sc := synth.New("database", t0)
	sc.Add(key, sc.Watch("Database", key, "ADDED", 1))
	sc.Get(key)
	sc.Emit(observe.Event{Kind: observe.KindGate, Value: string(observe.GateWaiting), Key: key})
	s := state.New(state.Limits{})
	s.Apply(sc.Take()...)
	counts := s.QueueCounts(sc.Now())
	if counts[state.QueueProcessing] != 0 || counts[state.QueueDequeued] != 1 {
		t.Fatalf("held at the gate: counts %v, want 0 in progress and 1 dequeued", counts)
	}
	q, _ := s.QueueItem(key)
	if got := s.ItemState(q, sc.Now()); got != state.QueueDequeued {
		t.Fatalf("held at the gate: item state %q", got)
	}

	sc.Emit(observe.Event{Kind: observe.KindReconcileStart, Key: key, ReconcileID: "r1"})
	s.Apply(sc.Take()...)
	counts = s.QueueCounts(sc.Now())
	if counts[state.QueueProcessing] != 1 || counts[state.QueueDequeued] != 0 {
		t.Fatalf("reconcile started: counts %v, want 1 in progress", counts)
	}
}
