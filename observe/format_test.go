package observe_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/operator-lab/lab/observe"
)

func TestBriefLeavesOutTheBookkeeping(t *testing.T) {
	cases := []struct {
		e      observe.Event
		detail string
		brief  string
	}{
		{observe.Event{Kind: observe.KindWatch, Type: "ADDED", Object: "Database", ResourceVersion: "42", Generation: 1},
			"ADDED Database rv=42 gen=1", "watch ADDED Database gen=1"},
		{observe.Event{Kind: observe.KindQueueAdd, Cause: 7},
			"cause=#7", "queue.add"},
		{observe.Event{Kind: observe.KindReconcileStart, ReconcileID: "0123456789abcdef"},
			"id=01234567", "reconcile.start"},
		{observe.Event{Kind: observe.KindReconcileEnd, Result: observe.ResultError, DurationMs: 3.25, Error: "boom"},
			`error took=3.2ms error="boom"`, `reconcile.end error error="boom"`},
		{observe.Event{Kind: observe.KindClient, Verb: "get", Object: "Greeting", Name: "g", Source: observe.SourceCache, Outcome: observe.OutcomeNotFound},
			"get Greeting/g from=cache → notfound", "client get Greeting/g from=cache → notfound"},
		{observe.Event{Kind: observe.KindExternal, Op: "provision", Outcome: "ok", LatencyMs: 12},
			"provision → ok latency=12.0ms", "external provision → ok"},
		{observe.Event{Kind: observe.KindQueueAddAfter, Delay: observe.Duration(23 * time.Second)},
			"delay=23s", "queue.add_after delay=23s"},
	}
	for _, tc := range cases {
		if got := tc.e.Detail(); got != tc.detail {
			t.Errorf("Detail(%s) = %q, want %q", tc.e.Kind, got, tc.detail)
		}
		if got := tc.e.Brief(); got != tc.brief {
			t.Errorf("Brief(%s) = %q, want %q", tc.e.Kind, got, tc.brief)
		}
	}
}

func TestLineLeadsWithTheSeqAndLetsTheCallerPaint(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e := observe.Event{Seq: 12, Time: t0.Add(50 * time.Millisecond), Kind: observe.KindReconcileEnd,
		Controller: "database", Key: "ns/db", Result: observe.ResultSuccess}
	line := e.Line(observe.LineOptions{Seq: true, Start: t0, Paint: func(p observe.Part, _ observe.Event, s string) string {
		if p == observe.PartDetail {
			return "<" + s + ">"
		}
		return s
	}})
	if !strings.HasPrefix(line, "  12 +0.050s") {
		t.Errorf("line = %q, want it to start with the seq and the relative time", line)
	}
	if !strings.HasSuffix(line, " <success>") {
		t.Errorf("line = %q, want the painted detail at the end", line)
	}
	if plain := e.Line(observe.LineOptions{Start: t0}); !strings.HasPrefix(plain, "+0.050s") || strings.Contains(plain, "<") {
		t.Errorf("plain line = %q", plain)
	}
}

// The trace's line, and the brief phrase check messages quote.
func ExampleEvent_Line() {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	events := []observe.Event{
		{Seq: 3, Time: t0, Kind: observe.KindQueueAddAfter, Controller: "database", Key: "ns/db", Delay: observe.Duration(50 * time.Millisecond)},
		{Seq: 4, Time: t0.Add(1500 * time.Millisecond), Kind: observe.KindReconcileEnd, Controller: "database", Key: "ns/db",
			Result: observe.ResultError, DurationMs: 1.5, Error: "boom"},
	}
	fmt.Print(observe.Lines(events, observe.LineOptions{Start: t0}))
	fmt.Println(events[1].Brief())
	// Output:
	// +0.000s       queue.add_after        database   ns/db                    delay=50ms
	// +1.500s       reconcile.end          database   ns/db                    error took=1.5ms error="boom"
	// reconcile.end error error="boom"
}
