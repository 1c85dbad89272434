package observe

import (
	"context"
	"testing"
)

func TestEmitFillsScopeFromContext(t *testing.T) {
	b := NewBus()
	r := NewRecorder(b)
	ctx := WithScope(context.Background(), Scope{Controller: "db", Key: "ns/a", ReconcileID: "r1"})

	Emit(ctx, b, Event{Kind: KindPhase, From: "Pending", To: "Provisioning"})
	Emit(ctx, b, Event{Kind: KindClient, Key: "other/b"}) // explicit fields win
	Emit(ctx, nil, Event{Kind: KindPhase})                // nil emitter: dropped, no panic
	Emit(context.Background(), b, Event{Kind: KindBreaker})

	events := r.Events()
	if len(events) != 3 {
		t.Fatalf("got %d events, want 3", len(events))
	}
	if e := events[0]; e.Controller != "db" || e.Key != "ns/a" || e.ReconcileID != "r1" || e.To != "Provisioning" {
		t.Errorf("scope not filled: %+v", e)
	}
	if e := events[1]; e.Key != "other/b" || e.Controller != "db" {
		t.Errorf("explicit key overwritten or controller not filled: %+v", e)
	}
	if e := events[2]; e.Controller != "" || e.Key != "" || e.ReconcileID != "" {
		t.Errorf("scope invented without one in the context: %+v", e)
	}
	if got := ScopeFrom(ctx); got != (Scope{Controller: "db", Key: "ns/a", ReconcileID: "r1"}) {
		t.Errorf("ScopeFrom = %+v", got)
	}
}
