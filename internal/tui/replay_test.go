package tui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/operator-lab/lab/internal/tui/state"
	"github.com/operator-lab/lab/observe"
)

func newReplayModel(w, h int, trace []observe.Event) Model {
	m := New(Options{Header: Header{Source: "trace.jsonl"}, Trace: trace, Renderer: asciiRenderer()})
	return update(m, tea.WindowSizeMsg{Width: w, Height: h})
}

// folded is the state after the first n events, built independently.
func folded(trace []observe.Event, n int) *state.State {
	s := state.New(state.Limits{})
	s.Apply(trace[:n]...)
	return s
}

func sameState(t *testing.T, what string, got, want *state.State) {
	t.Helper()
	if got.Totals().Events != want.Totals().Events || got.ReconcileCount() != want.ReconcileCount() || got.ObjectCount() != want.ObjectCount() {
		t.Fatalf("%s: state differs: events %d/%d reconciles %d/%d objects %d/%d", what,
			got.Totals().Events, want.Totals().Events, got.ReconcileCount(), want.ReconcileCount(), got.ObjectCount(), want.ObjectCount())
	}
	for _, o := range want.Objects() {
		g, ok := got.Object(o.Key)
		if !ok || g.Phase != o.Phase || g.History.Len() != o.History.Len() {
			t.Fatalf("%s: object %s differs", what, o.Key)
		}
	}
}

func TestReplayStepsEventByEventBothWays(t *testing.T) {
	trace := lifecycleScript().Events()
	m := newReplayModel(120, 40, trace)
	if m.State().Totals().Events != 0 || !strings.Contains(m.View(), "start of trace") {
		t.Fatal("a replay starts before the first event")
	}
	for i := 1; i <= 30; i++ {
		m, _ = press(m, "right")
		sameState(t, "forward", m.State(), folded(trace, i))
	}
	for i := 29; i >= 20; i-- {
		m, _ = press(m, "left")
		sameState(t, "backward", m.State(), folded(trace, i))
	}
	if !strings.Contains(m.View(), "event 20/") {
		t.Fatalf("status line does not show the position:\n%s", m.View())
	}
	m, _ = press(m, "G")
	sameState(t, "end", m.State(), folded(trace, len(trace)))
	m, _ = press(m, "g")
	sameState(t, "start", m.State(), folded(trace, 0))
}

func TestReplayStepsReconcileByReconcile(t *testing.T) {
	trace := lifecycleScript().Events()
	m := newReplayModel(120, 40, trace)
	for n := 1; n <= 4; n++ {
		m, _ = press(m, "]")
		r, ok := m.State().LastReconcile()
		if !ok || r.N != n || !r.Done {
			t.Fatalf("after %d × ]: last reconcile %+v, want #%d finished with its queue calls", n, r, n)
		}
		if last := trace[m.replay.cursor-1]; last.Kind != observe.KindQueueDone {
			t.Fatalf("] stopped at %s, want right after queue.done", last.Kind)
		}
	}
	m, _ = press(m, "[")
	if r, _ := m.State().LastReconcile(); r.N != 3 || !r.Done {
		t.Fatalf("[ went to #%d, want #3", r.N)
	}
	m, _ = press(m, "[")
	m, _ = press(m, "[")
	m, _ = press(m, "[")
	if m.State().ReconcileCount() != 0 {
		t.Fatalf("[ before the first reconcile should go to the start, have %d reconciles", m.State().ReconcileCount())
	}
}

func TestReplayPlayAdvancesOnTicks(t *testing.T) {
	trace := lifecycleScript().Events()
	m := newReplayModel(120, 40, trace)
	m, cmd := press(m, " ")
	if cmd == nil || !m.replay.playing {
		t.Fatal("space should start playing")
	}
	for i := 0; i < 5; i++ {
		m = update(m, tickMsg(time.Time{}))
	}
	if m.replay.cursor != 5 {
		t.Fatalf("cursor = %d after 5 ticks", m.replay.cursor)
	}
	if strings.Contains(m.View(), "c create") {
		t.Fatal("a replay must not offer live actions")
	}
}

func TestGoldenReplay(t *testing.T) {
	trace := lifecycleScript().Events()
	m := newReplayModel(100, 30, trace)
	for i := 0; i < 3; i++ {
		m, _ = press(m, "]")
	}
	m, _ = press(m, "right")
	golden.RequireEqual(t, m.View())
}

// The status line speaks of an event in the text stream's words, without its
// bookkeeping (timings, resource versions, causes).
func TestReplayStatusLineUsesTheTraceWording(t *testing.T) {
	st := NewStyles(asciiRenderer())
	cases := []struct {
		e    observe.Event
		want string
	}{
		{observe.Event{Kind: observe.KindReconcileEnd, Key: "lab/db", Result: observe.ResultError, DurationMs: 2, Error: "boom"},
			`reconcile.end lab/db error error="boom"`},
		{observe.Event{Kind: observe.KindClient, Key: "lab/db", Verb: "get", Object: "Database", Name: "db", Source: observe.SourceCache, Outcome: observe.OutcomeOK},
			"client lab/db get Database/db from=cache → ok"},
		{observe.Event{Kind: observe.KindQueueAddAfter, Key: "lab/db", Delay: observe.Duration(500 * time.Millisecond), Cause: 3},
			"queue.add_after lab/db delay=500ms"},
		{observe.Event{Kind: observe.KindQueueGet, Key: "lab/db"}, "queue.get lab/db"},
	}
	for _, tc := range cases {
		if got := describeEvent(st, tc.e); got != tc.want {
			t.Errorf("describeEvent(%s) = %q, want %q", tc.e.Kind, got, tc.want)
		}
	}
}
