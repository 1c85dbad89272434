package tui

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/operator-lab/lab/internal/tui/synth"
	"github.com/operator-lab/lab/observe"
)

// Golden views: fixed size, fixed clock, no colour (termenv.Ascii), so the
// files under testdata/ read as the screen a learner sees. Regenerate with
// `go test ./internal/tui -run Golden -update` and review the diff.

func TestGoldenStartup(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	m := New(Options{
		Header:   Header{Lab: "4.4", Title: "Advanced patterns"},
		Startup:  []string{"control-plane binaries", "etcd", "kube-apiserver", "CRDs", "operator", "sample Database"},
		Now:      clock.Now,
		Renderer: asciiRenderer(),
	})
	m = update(m, StepDoneMsg{Step: "control-plane binaries", Took: 2 * time.Millisecond, Detail: "~/.local/share/kubebuilder-envtest/k8s/1.37.2-linux-amd64"})
	clock.SetTime(t0.Add(900 * time.Millisecond))
	m = update(m, StepDoneMsg{Step: "etcd", Took: 900 * time.Millisecond})
	clock.SetTime(t0.Add(2100 * time.Millisecond))
	golden.RequireEqual(t, m.View())
}

func TestGoldenReconcileSequence(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	m := newLiveModel(120, 40, clock, newFakeControls())
	sc := synth.New("database", t0.Add(time.Second))
	sc.DatabaseLifecycle("lab/db-1")
	m = fold(m, sc.Events())
	clock.SetTime(sc.Now().Add(300 * time.Millisecond))
	golden.RequireEqual(t, m.View())
}

// TestGoldenPausedStepThrough: the gate is closed, one worker holds a
// dequeued key, and more changes keep arriving and wait in the queue.
func TestGoldenPausedStepThrough(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	fake := newFakeControls()
	m := newLiveModel(120, 40, clock, fake)
	sc := synth.New("database", t0.Add(time.Second))
	sc.Add("lab/db-1", sc.Watch("Database", "lab/db-1", "ADDED", 1))
	sc.Get("lab/db-1")
	sc.Reconcile("lab/db-1", synth.After(2*time.Second),
		synth.Client("get", "Database", "db-1", observe.SourceCache, observe.OutcomeOK),
		synth.Phase("", "Pending"),
		synth.Client("status.update", "Database", "db-1", observe.SourceAPI, observe.OutcomeOK))
	m = fold(m, sc.Take())
	m, _ = press(m, "p")
	sc.Emit(observe.Event{Kind: observe.KindGate, Value: "paused"})
	sc.Advance(200 * time.Millisecond)
	sc.Add("lab/db-1", sc.Watch("Database", "lab/db-1", "MODIFIED", 1))
	sc.Get("lab/db-1") // a worker takes it and waits at the gate
	sc.Emit(observe.Event{Kind: observe.KindGate, Value: "waiting", Key: "lab/db-1"})
	for i := 2; i <= 3; i++ {
		k := "lab/db-" + string(rune('0'+i))
		sc.Add(k, sc.Watch("Database", k, "ADDED", 1))
		sc.Advance(100 * time.Millisecond)
	}
	m = fold(m, sc.Take())
	m = update(m, tickMsg(clock.Now()))
	clock.SetTime(sc.Now().Add(500 * time.Millisecond))
	golden.RequireEqual(t, m.View())
}

// TestGoldenBackoffAfterFailures: 80×24 with the retry-delay tab open after
// errors (rate limiter), RequeueAfter and the lesson's backoff.
func TestGoldenBackoffAfterFailures(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	m := newLiveModel(80, 24, clock, newFakeControls())
	sc := synth.New("database", t0.Add(time.Second))
	sc.Add("lab/db-1", sc.Watch("Database", "lab/db-1", "ADDED", 1))
	sc.Failures("lab/db-1", 4, "external system unavailable")
	sc.Get("lab/db-1")
	sc.Reconcile("lab/db-1", synth.After(5*time.Second), synth.Backoff(1, 5*time.Second))
	sc.Advance(5 * time.Second)
	sc.Get("lab/db-1")
	sc.Reconcile("lab/db-1", synth.After(10*time.Second), synth.Backoff(2, 10*time.Second))
	m = fold(m, sc.Events())
	m, _ = press(m, "tab") // Objects → Retry delays
	clock.SetTime(sc.Now().Add(1500 * time.Millisecond))
	golden.RequireEqual(t, m.View())
}

func TestGoldenDashboard80x24(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	m := newLiveModel(80, 24, clock, newFakeControls())
	sc := lifecycleScript()
	m = fold(m, sc.Events())
	clock.SetTime(sc.Now().Add(300 * time.Millisecond))
	golden.RequireEqual(t, m.View())
}

func TestGoldenHelpOverlay(t *testing.T) {
	m := newLiveModel(120, 40, clocktesting.NewFakePassiveClock(t0), newFakeControls())
	m, _ = press(m, "?")
	golden.RequireEqual(t, m.View())
}

func TestGoldenTooSmall(t *testing.T) {
	m := newLiveModel(50, 12, clocktesting.NewFakePassiveClock(t0), newFakeControls())
	golden.RequireEqual(t, m.View())
}
