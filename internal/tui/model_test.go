package tui

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/operator-lab/lab/internal/tui/state"
	"github.com/operator-lab/lab/internal/tui/synth"
	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator/world"
)

func TestSwitchKeysCycleTheOperatorSwitches(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	fake := newFakeControls()
	m := newLiveModel(120, 40, clock, fake)

	for _, want := range []string{"requeue", "after", "terminal", "error"} {
		m, _ = press(m, "r")
		if got := fake.value("requeue"); got != want {
			t.Fatalf("after r: requeue=%s, want %s", got, want)
		}
	}
	m, _ = press(m, "b")
	m, _ = press(m, "l")
	m, _ = press(m, "e")
	m, _ = press(m, "o")
	if fake.value("breaker") != "off" || fake.value("ratelimit") != "off" || fake.value("external") != "down" || fake.value("backoff") != "lesson" {
		t.Fatalf("switches = %v", fake.Switches())
	}
	// Timescale moves along its options and stops at the ends.
	m, _ = press(m, "+")
	if fake.value("timescale") != "20" {
		t.Fatalf("timescale = %s, want 20", fake.value("timescale"))
	}
	for i := 0; i < 10; i++ {
		m, _ = press(m, "-")
	}
	if fake.value("timescale") != "1" {
		t.Fatalf("timescale = %s, want 1 (the slowest option)", fake.value("timescale"))
	}
	if !strings.Contains(m.View(), "already at its slowest") {
		t.Fatal("pressing - at the slowest timescale should say so")
	}
	// The header shows the new values, once their events arrive.
	if header := strings.Split(m.View(), "\n")[1]; !strings.Contains(header, "requeue=error  breaker=on") {
		t.Fatalf("switch line %q changed before the switch events arrived", header)
	}
	m = echo(m, fake)
	header := strings.Split(m.View(), "\n")[1]
	for _, want := range []string{"requeue=error", "breaker=off", "external=down", "timescale=‹1×›"} {
		if !strings.Contains(header, want) {
			t.Errorf("switch line %q lacks %q", header, want)
		}
	}
}

func TestSwitchTheLabDoesNotHaveIsNotOffered(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	fake := newFakeControls()
	fake.switches = fake.switches[:1] // a lab with only the requeue switch (like 3.1)
	m := newLiveModel(120, 40, clock, fake)
	if strings.Contains(m.View(), "b breaker") {
		t.Fatal("help offers a breaker key the lab does not have")
	}
	m, _ = press(m, "b")
	if len(fake.Calls()) != 0 {
		t.Fatalf("calls = %v, want none", fake.Calls())
	}
	m, _ = press(m, "?")
	if strings.Contains(m.View(), "circuit breaker on/off") {
		t.Fatal("the help overlay lists a switch the lab does not have")
	}
}

func TestStepThroughPausesStepsAndResumes(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	fake := newFakeControls()
	m := newLiveModel(120, 40, clock, fake)

	m, _ = press(m, "s")
	if !strings.Contains(m.View(), "step works while paused") {
		t.Fatal("step while running should explain it needs a pause")
	}
	m, _ = press(m, "p")
	m = echo(m, fake)
	// A worker takes a key and waits at the gate.
	sc := synth.New("database", t0)
	sc.Add("lab/db-1", sc.Watch("Database", "lab/db-1", "ADDED", 1))
	sc.Get("lab/db-1")
	sc.Emit(observe.Event{Kind: observe.KindGate, Value: "waiting", Key: "lab/db-1"})
	m = fold(m, sc.Events())
	if !strings.Contains(m.View(), "PAUSED · 1 waiting at the gate") {
		t.Fatalf("paused badge missing:\n%s", m.View())
	}
	m, _ = press(m, "s")
	m, _ = press(m, "s")
	m = echo(m, fake)
	if strings.Contains(m.View(), "PAUSED · 1 waiting") {
		t.Fatal("the step let the held reconcile through, yet the badge still counts it")
	}
	m, _ = press(m, " ")
	if got := strings.Join(fake.Calls(), ","); got != "pause,step,step,resume" {
		t.Fatalf("calls = %s", got)
	}
	m = echo(m, fake)
	if strings.Contains(m.View(), "PAUSED") {
		t.Fatal("still shows PAUSED after resume")
	}
}

func TestObjectActionsTargetTheSelectedObject(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	fake := newFakeControls()
	m := newLiveModel(120, 40, clock, fake)

	m, cmd := press(m, "u")
	if cmd != nil || !strings.Contains(m.View(), "no object selected") {
		t.Fatal("update with no objects should say there is nothing to update")
	}
	m, cmd = press(m, "c")
	mustFail(t, cmd == nil, "create returned no command")
	m = update(m, cmd())
	if m.dash.focus.selected != "lab/db-2" || !strings.Contains(m.View(), "created object lab/db-2") {
		t.Fatalf("selected %q after create; view:\n%s", m.dash.focus.selected, m.View())
	}

	sc := synth.New("database", t0)
	sc.Add("lab/db-1", sc.Watch("Database", "lab/db-1", "ADDED", 1))
	sc.Add("lab/db-2", sc.Watch("Database", "lab/db-2", "ADDED", 1))
	m = fold(m, sc.Events())
	m, _ = press(m, "k") // up: from db-2 to db-1
	for _, k := range []string{"u", "m", "d"} {
		var cmd tea.Cmd
		m, cmd = press(m, k)
		mustFail(t, cmd == nil, "%s returned no command", k)
		m = update(m, cmd())
	}
	want := "create,update lab/db-1,burst lab/db-1 5,delete lab/db-1"
	if got := strings.Join(fake.Calls(), ","); got != want {
		t.Fatalf("calls = %s, want %s", got, want)
	}
}

func TestActionErrorsAreShown(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	m := newLiveModel(120, 40, clock, newFakeControls())
	m = update(m, actionDoneMsg{what: "created object", err: errors.New("admission webhook said no")})
	if !strings.Contains(m.View(), "created object failed: admission webhook said no") {
		t.Fatal("action error not shown")
	}
}

func TestQuitKeys(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		m := newLiveModel(80, 24, clocktesting.NewFakePassiveClock(t0), newFakeControls())
		_, cmd := press(m, k)
		if cmd == nil {
			t.Fatalf("%s: no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Fatalf("%s did not quit", k)
		}
	}
}

func TestLayoutAdaptsToTheTerminal(t *testing.T) {
	m := newLiveModel(120, 40, clocktesting.NewFakePassiveClock(t0), newFakeControls())
	cases := []struct {
		w, h int
		want layoutKind
	}{
		{160, 50, layoutFull}, {120, 40, layoutFull}, {100, 30, layoutMedium}, {80, 24, layoutMedium},
		{70, 20, layoutCompact}, {60, 16, layoutCompact}, {59, 30, layoutTooSmall}, {100, 15, layoutTooSmall},
	}
	for _, c := range cases {
		m = update(m, tea.WindowSizeMsg{Width: c.w, Height: c.h})
		if got := m.layout(); got != c.want {
			t.Errorf("%dx%d: layout %d, want %d", c.w, c.h, got, c.want)
		}
		view := m.View()
		lines := strings.Split(view, "\n")
		if c.want == layoutTooSmall {
			if !strings.Contains(view, "Terminal too small") {
				t.Errorf("%dx%d: no too-small message", c.w, c.h)
			}
			continue
		}
		if len(lines) != c.h {
			t.Errorf("%dx%d: %d lines, want exactly the terminal height", c.w, c.h, len(lines))
		}
		for i, l := range lines {
			if w := ansi.StringWidth(l); w > c.w {
				t.Errorf("%dx%d: line %d is %d wide: %q", c.w, c.h, i, w, l)
			}
		}
	}
}

func TestTabCyclesTheSharedPane(t *testing.T) {
	m := newLiveModel(80, 24, clocktesting.NewFakePassiveClock(t0), newFakeControls())
	var seen []pane
	for i := 0; i < 4; i++ {
		seen = append(seen, m.dash.activeTab())
		m, _ = press(m, "tab")
	}
	if fmt.Sprint(seen) != fmt.Sprint([]pane{paneObjects, paneBackoff, panePatterns, paneObjects}) {
		t.Fatalf("tabs = %v", seen)
	}
}

func TestEventsFoldIntoStateAndKeepListening(t *testing.T) {
	ch := make(chan observe.Event, 16)
	m := New(Options{Events: ch, Now: (clocktesting.NewFakePassiveClock(t0)).Now, Renderer: asciiRenderer()})
	sc := synth.New("database", t0)
	sc.Add("lab/db-1", sc.Watch("Database", "lab/db-1", "ADDED", 1))
	for _, e := range sc.Events() {
		ch <- e
	}
	msg := waitForEvents(ch)()
	batch, ok := msg.(EventsMsg)
	if !ok || len(batch) != 2 {
		t.Fatalf("msg = %#v, want one batch of 2 events", msg)
	}
	next, cmd := m.Update(batch)
	if cmd == nil {
		t.Fatal("the model stopped listening after a batch")
	}
	if q, ok := next.(Model).State().QueueItem("lab/db-1"); !ok || q.State != state.QueueWaiting {
		t.Fatalf("queue item = %+v", q)
	}
	close(ch)
	if _, ok := waitForEvents(ch)().(eventsClosedMsg); !ok {
		t.Fatal("a closed channel should end listening")
	}
	m = update(next.(Model), eventsClosedMsg{})
	if !strings.Contains(m.View(), "STOPPED") {
		t.Fatal("a closed event stream should show STOPPED")
	}
}

func TestStartupScreenShowsStepsThenTheDashboard(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	m := New(Options{Header: Header{Lab: "4.4"}, Startup: []string{"etcd", "kube-apiserver"}, Now: clock.Now, Renderer: asciiRenderer()})
	m = update(m, StepDoneMsg{Step: "etcd", Took: 800 * time.Millisecond})
	view := m.View()
	if !strings.Contains(view, "✓ etcd") || !strings.Contains(view, "800ms") {
		t.Fatalf("startup view:\n%s", view)
	}
	m = update(m, StepDoneMsg{Step: "kube-apiserver", Err: errors.New("port 6443 in use")})
	if view := m.View(); !strings.Contains(view, "could not start") || !strings.Contains(view, "port 6443 in use") {
		t.Fatalf("failed step not shown:\n%s", view)
	}
	ch := make(chan observe.Event)
	next, cmd := m.Update(ReadyMsg{Header: Header{Lab: "4.4", Title: "Advanced patterns"}, Controls: newFakeControls(), Events: ch})
	m = next.(Model)
	if cmd == nil || m.screen != screenDashboard || !strings.Contains(m.View(), "Reconcile sequence") {
		t.Fatal("ReadyMsg did not open the dashboard and start listening")
	}
}

func TestEventFloodKeepsMemoryBounded(t *testing.T) {
	m := newLiveModel(120, 40, clocktesting.NewFakePassiveClock(t0), newFakeControls())
	sc := synth.New("database", t0)
	for i := 0; i < 2000; i++ {
		k := fmt.Sprintf("flood/db-%d", i%700)
		sc.Add(k, sc.Watch("Database", k, "MODIFIED", int64(i)))
		sc.Get(k)
		sc.Reconcile(k, synth.Failed("boom", i%10+1, time.Millisecond),
			synth.Client("get", "Database", k, observe.SourceCache, observe.OutcomeOK),
			synth.External(world.OpHealthCheck, observe.OutcomeError, time.Millisecond))
		if i%50 == 0 {
			m = fold(m, sc.Take())
			_ = m.View()
		}
	}
	m = fold(m, sc.Take())
	s, lim := m.State(), m.State().Limits()
	if s.ReconcileCount() > lim.Reconciles || s.ObjectCount() > lim.Objects || len(s.AllSeries()) > lim.Keys || s.LogLen() > lim.Log {
		t.Fatalf("history outgrew its limits: reconciles %d, objects %d, series %d, log %d",
			s.ReconcileCount(), s.ObjectCount(), len(s.AllSeries()), s.LogLen())
	}
	if s.Totals().Reconciles != 2000 {
		t.Fatalf("reconciles counted = %d", s.Totals().Reconciles)
	}
}

func TestPinningOlderReconciles(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	m := newLiveModel(120, 40, clock, newFakeControls())
	sc := synth.New("database", t0)
	sc.DatabaseLifecycle("lab/db-1")
	m = fold(m, sc.Events())
	clock.SetTime(sc.Now())
	n := m.State().ReconcileCount()
	m, _ = press(m, "[")
	m, _ = press(m, "[")
	if m.dash.focus.pinned != n-1 {
		t.Fatalf("pinned #%d, want #%d", m.dash.focus.pinned, n-1)
	}
	if !strings.Contains(m.View(), fmt.Sprintf("#%d lab/db-1", n-1)) || !strings.Contains(m.View(), "pinned") {
		t.Fatal("the pinned reconcile is not shown first")
	}
	m, _ = press(m, "]")
	m, _ = press(m, "]")
	if m.dash.focus.pinned != 0 {
		t.Fatalf("moving past the newest should follow again, pinned = %d", m.dash.focus.pinned)
	}
}
