package tui

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/operator-lab/lab/internal/tui/synth"
	"github.com/operator-lab/lab/observe"
)

// TestProgramShowsLiveEventsAndQuits runs the model in a real bubbletea
// program fed by a real observe.Bus, and quits it with q.
func TestProgramShowsLiveEventsAndQuits(t *testing.T) {
	bus := observe.NewBus()
	sub := bus.Subscribe(observe.DefaultBuffer)
	m := New(Options{
		Header:   Header{Lab: "4.4", Title: "Advanced patterns"},
		Controls: newFakeControls(),
		Events:   sub.C,
		Renderer: asciiRenderer(),
	})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	sc := synth.New("database", time.Now())
	sc.DatabaseLifecycle("lab/orders")
	for _, e := range sc.Events() {
		e.Seq, e.Time = 0, time.Time{} // the bus stamps them
		bus.Emit(e)
	}
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("[Ready]")) && bytes.Contains(b, []byte("Ready=True"))
	}, teatest.WithDuration(10*time.Second))
	tm.Send(keyMsg("q"))
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
	if o, ok := final.State().Object("lab/orders"); !ok || o.Phase != "Ready" {
		t.Fatalf("final object = %+v", o)
	}
	bus.Close()
}

// TestProgramAbsorbsAnEventFlood emits 20,000 events into a running program
// at about 10,000 events/s: every event is either shown or counted as
// dropped by the bus (Emit never blocks), and the program still answers.
func TestProgramAbsorbsAnEventFlood(t *testing.T) {
	bus := observe.NewBus()
	sub := bus.Subscribe(observe.DefaultBuffer)
	m := New(Options{Controls: newFakeControls(), Events: sub.C, Renderer: asciiRenderer()})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	const total = 20000
	sc := synth.New("database", time.Now())
	for len(sc.Events()) < total {
		k := fmt.Sprintf("flood/db-%d", len(sc.Events())%300)
		sc.Add(k, 0)
		sc.Get(k)
		sc.Reconcile(k, synth.Success, synth.Client("get", "Database", k, observe.SourceCache, observe.OutcomeOK))
	}
	start := time.Now()
	for i, e := range sc.Events()[:total] {
		e.Seq, e.Time = 0, time.Time{}
		bus.Emit(e)
		if i%100 == 99 { // 100 events per 10ms
			time.Sleep(time.Until(start.Add(time.Duration(i+1) * 100 * time.Microsecond)))
		}
	}
	bus.Close() // closes the subscription: the model sees the end of the stream
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("STOPPED")) },
		teatest.WithDuration(20*time.Second))
	tm.Send(keyMsg("q"))
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
	got := final.State().Totals().Events + sub.Dropped()
	if got != total {
		t.Fatalf("shown %d + dropped %d = %d, want %d", final.State().Totals().Events, sub.Dropped(), got, total)
	}
	t.Logf("flood: %d events folded, %d dropped by the bus", final.State().Totals().Events, sub.Dropped())
	lim := final.State().Limits()
	if final.State().ReconcileCount() > lim.Reconciles || final.State().LogLen() > lim.Log {
		t.Fatal("history outgrew its limits")
	}
}

// TestProgramOpensTheLessonAndRunsADemo runs the model in a real bubbletea
// program: L opens the lesson (rendered in the background), > moves to a
// section with a demo, w runs it through the controls.
func TestProgramOpensTheLessonAndRunsADemo(t *testing.T) {
	sections := len(mustLoad(t, "4.4", "en").Sections)
	fake := newFakeControls()
	m := New(Options{Header: Header{Lab: "4.4", Title: "Advanced patterns"}, Controls: fake,
		Renderer: asciiRenderer(), Lang: "en"})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	tm.Send(keyMsg("L"))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte(fmt.Sprintf("Lesson 4.4 · 1/%d", sections))) && bytes.Contains(b, []byte("press w to see this"))
	}, teatest.WithDuration(10*time.Second))
	tm.Send(keyMsg(">"))
	tm.Send(keyMsg(">"))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte(fmt.Sprintf("3/%d External dependencies", sections))) && bytes.Contains(b, []byte("Many operators depend"))
	}, teatest.WithDuration(10*time.Second))
	tm.Send(keyMsg("w"))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("demo external-deps: set requeue=after, backoff=lesson, external=down; created lab/db-2"))
	}, teatest.WithDuration(10*time.Second))
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	if got := fmt.Sprint(fake.Calls()); got != "[requeue=after backoff=lesson external=down create]" {
		t.Fatalf("calls = %s", got)
	}
}
