package tui

import (
	"regexp"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/operator-lab/lab/internal/tui/synth"
	"github.com/operator-lab/lab/observe"
)

// longError is a TerminalError as the 3.1 operator wraps it, longer than
// any pane at 160 columns.
const longError = "terminal error: reconcile lab/too-loud-2: send the greeting: message service: " +
	"spec.count is 11, at most 10 is supported: the service refuses a greeting repeated more often than that, for good"

// terminalScript is lab 3.1's invalid HelloWorld: created, rejected for
// good — after a Database failing a few times, so it is not the only one.
func terminalScript() *synth.Script {
	sc := lifecycleScript()
	cause := sc.Watch("HelloWorld", "lab/too-loud-2", "ADDED", 1)
	sc.Add("lab/too-loud-2", cause)
	sc.Get("lab/too-loud-2")
	sc.Reconcile("lab/too-loud-2", synth.Outcome{Result: observe.ResultTerminal, Error: longError},
		synth.Client("get", "HelloWorld", "too-loud-2", observe.SourceCache, observe.OutcomeOK),
		synth.Condition("Ready", "False", "InvalidSpec"),
		synth.Condition("Failed", "True", "InvalidSpec"),
		synth.Client("status.update", "HelloWorld", "too-loud-2", observe.SourceAPI, observe.OutcomeOK))
	return sc
}

func enter(m Model) Model { return update(m, tea.KeyMsg{Type: tea.KeyEnter}) }

// frameText is the inside of the body's frames, its lines joined with
// spaces: the text a learner reads, however it was wrapped.
func frameText(view string) string {
	var words []string
	for _, line := range strings.Split(view, "\n") {
		if i, j := strings.Index(line, "│"), strings.LastIndex(line, "│"); i >= 0 && j > i {
			line = line[i+len("│") : j]
		}
		words = append(words, strings.Fields(line)...)
	}
	return strings.Join(words, " ")
}

// readAll is everything the open detail shows, paged through to its end.
func readAll(m Model) string {
	views := []string{m.View()}
	for i := 0; i < 40; i++ {
		m = update(m, tea.KeyMsg{Type: tea.KeyPgDown})
		if v := m.View(); v != views[len(views)-1] {
			views = append(views, v)
			continue
		}
		break
	}
	return strings.Join(views, "\n")
}

// TestDetailShowsTheWholeReconcile: enter opens the selected object's
// reconcile in full — its cause, every step, the error uncut, the queue's
// decision — at every size, scrolling where it must; esc returns.
func TestDetailShowsTheWholeReconcile(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}, {160, 50}} {
		clock := clocktesting.NewFakePassiveClock(t0)
		m := newLiveModel(size[0], size[1], clock, newFakeControls())
		sc := terminalScript()
		m = fold(m, sc.Events())
		clock.SetTime(sc.Now().Add(time.Second))
		if dash := m.View(); strings.Contains(frameText(dash), longError) {
			t.Fatalf("%dx%d: the dashboard already shows the whole error; the test proves nothing", size[0], size[1])
		}
		m = enter(m)
		text := frameText(readAll(m))
		for _, want := range []string{
			"Reconcile #13 in full", // the newest, of the object just created
			"watch ADDED HelloWorld gen=1",
			"client get HelloWorld/too-loud-2 from=cache → ok",
			"condition Failed=True reason=InvalidSpec",
			"client status.update HelloWorld/too-loud-2 from=api → ok",
			"a TerminalError: not retried",
			longError,
			"no requeue, no Forget: terminal errors are not retried",
			"queue.Done: the worker let go of the key",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("%dx%d: the detail lacks %q:\n%s", size[0], size[1], want, text)
			}
		}
		for i, l := range strings.Split(m.View(), "\n") {
			if w := ansi.StringWidth(l); w > size[0] {
				t.Errorf("%dx%d: line %d is %d wide", size[0], size[1], i, w)
			}
		}
		if strings.Contains(m.View(), "…") {
			t.Errorf("%dx%d: the detail cuts something:\n%s", size[0], size[1], m.View())
		}
		m, _ = press(m, "c") // keys behind it do nothing while it is open
		if !strings.Contains(m.View(), "in full") {
			t.Errorf("%dx%d: c closed the detail", size[0], size[1])
		}
		m, _ = press(m, "esc")
		if v := m.View(); !strings.Contains(v, "Reconcile sequence") || strings.Contains(v, "in full") {
			t.Errorf("%dx%d: esc does not return to the dashboard:\n%s", size[0], size[1], v)
		}
	}
}

// TestDetailOpensThePinnedReconcile: a reconcile pinned with [ is the one
// enter opens; its cause names the reconcile that asked for the requeue.
func TestDetailOpensThePinnedReconcile(t *testing.T) {
	m := newLiveModel(120, 40, clocktesting.NewFakePassiveClock(t0), newFakeControls())
	m = fold(m, terminalScript().Events())
	m, _ = press(m, "[")
	m, _ = press(m, "[") // #12: lab/db-2's fifth failure
	m = enter(m)
	text := frameText(m.View())
	for _, want := range []string{"Reconcile #12 in full", "#12 lab/db-2", "queue.add_rate_limited delay=40ms failures=4 — asked for by reconcile #11",
		"external healthcheck → error", "AddRateLimited → 80ms (failure 5)", "queue.add_rate_limited delay=80ms failures=5"} {
		if !strings.Contains(text, want) {
			t.Errorf("the detail lacks %q:\n%s", want, text)
		}
	}
}

// TestDetailFollowsTheReconcile: opened while the reconcile runs, the
// detail shows its end when the events bring it.
func TestDetailFollowsTheReconcile(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	m := newLiveModel(120, 40, clock, newFakeControls())
	sc := synth.New("helloworld", t0)
	sc.Add("lab/hello-1", sc.Watch("HelloWorld", "lab/hello-1", "ADDED", 1))
	sc.Get("lab/hello-1")
	sc.Reconcile("lab/hello-1", synth.Failed("dependency check: connection refused", 1, 5*time.Millisecond),
		synth.Client("get", "HelloWorld", "hello-1", observe.SourceCache, observe.OutcomeOK))
	events := sc.Events()
	end := 0
	for i, e := range events {
		if e.Kind == observe.KindReconcileEnd {
			end = i
		}
	}
	m = fold(m, events[:end])
	clock.SetTime(sc.Now())
	m = enter(m)
	if text := frameText(m.View()); !strings.Contains(text, "still running") || !strings.Contains(text, "Reconcile has not returned") {
		t.Fatalf("a running reconcile:\n%s", text)
	}
	m = fold(m, events[end:])
	text := frameText(m.View())
	for _, want := range []string{"an error", "dependency check: connection refused", "chain dependency check └ connection refused",
		"AddRateLimited → 5ms (failure 1)", "queue.Done"} {
		if !strings.Contains(text, want) {
			t.Errorf("after the end, the detail lacks %q:\n%s", want, text)
		}
	}
}

// TestDetailInReplay: the detail works on a recorded trace, and the help
// over it lists its own keys.
func TestDetailInReplay(t *testing.T) {
	m := New(Options{Header: Header{Lab: "4.4"}, Trace: terminalScript().Events(), Renderer: asciiRenderer(), Lang: "en"})
	m = update(m, tea.WindowSizeMsg{Width: 100, Height: 30})
	m, _ = press(m, "]") // to the end of the first reconcile
	m = enter(m)
	text := frameText(readAll(m))
	for _, want := range []string{"Reconcile #1 in full", "#1 lab/db-1", "phase (none) → Pending", "Result{}, nil", "Forget (failures reset)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the replayed detail lacks %q:\n%s", want, text)
		}
	}
	m, _ = press(m, "?")
	if help := m.View(); !strings.Contains(help, "Reconcile detail") || !regexp.MustCompile(`esc +back`).MatchString(help) {
		t.Errorf("the help over the detail does not list its keys:\n%s", help)
	}
	m, _ = press(m, "?")
	m, _ = press(m, "esc")
	if !strings.Contains(m.View(), "REPLAY") || strings.Contains(m.View(), "in full") {
		t.Errorf("esc does not return to the replay:\n%s", m.View())
	}
}

// TestDetailWithoutReconcile: enter before any reconcile says so.
func TestDetailWithoutReconcile(t *testing.T) {
	m := enter(newLiveModel(120, 40, clocktesting.NewFakePassiveClock(t0), newFakeControls()))
	if v := m.View(); strings.Contains(v, "Reconcile #") || !strings.Contains(v, "no reconcile yet") {
		t.Errorf("enter with no reconcile:\n%s", v)
	}
}

// TestGoldenDetail80x24 and 120x40: the invalid HelloWorld's reconcile in
// full, its long error wrapped — at 80×24 a page down, where the error is.
func TestGoldenDetail80x24(t *testing.T) { goldenDetail(t, 80, 24, 1) }

func TestGoldenDetail120x40(t *testing.T) { goldenDetail(t, 120, 40, 0) }

func goldenDetail(t *testing.T, w, h, pages int) {
	clock := clocktesting.NewFakePassiveClock(t0)
	m := newLiveModel(w, h, clock, newFakeControls())
	sc := terminalScript()
	m = fold(m, sc.Events())
	clock.SetTime(sc.Now().Add(time.Second))
	m = enter(m)
	for i := 0; i < pages; i++ {
		m = update(m, tea.KeyMsg{Type: tea.KeyPgDown})
	}
	golden.RequireEqual(t, m.View())
}
