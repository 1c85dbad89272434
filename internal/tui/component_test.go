package tui

import (
	"errors"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
)

// The components draw and take their keys without the root model: these
// tests drive each one alone, at the size a root would give it.

// settlePane runs a lesson pane's background renders, as the runtime would.
func settlePane(t *testing.T, p *lessonPane, cmd tea.Cmd) {
	t.Helper()
	for cmd != nil {
		msg, ok := cmd().(lessonRenderedMsg)
		if !ok {
			t.Fatalf("expected a lesson render, got %T", msg)
		}
		p.store(msg)
		cmd = p.refresh()
	}
}

func TestLessonPaneAlone(t *testing.T) {
	p := newLessonPane("4.4", "en", NewStyles(asciiRenderer()), false)
	p.SetSize(78, 15)
	settlePane(t, p, p.refresh())
	lines := p.View()
	if len(lines) != 15 || lines[14] != p.demoLine() {
		t.Fatalf("%d lines, want 15 ending with the demo line:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > 78 {
			t.Errorf("line %d is %d cells wide, the pane has 78: %q", i, w, l)
		}
	}

	k := DefaultKeyMap()
	k.configure(keyMode{lesson: true, lessonOpen: true}, func(string) bool { return false })
	if _, handled := p.Update(keyMsg("j"), k); !handled || p.view.YOffset != 1 {
		t.Fatalf("j: handled %v, offset %d; want handled at offset 1", handled, p.view.YOffset)
	}
	if _, handled := p.Update(keyMsg("c"), k); handled {
		t.Fatal("c is the root's key (create), the pane must leave it")
	}
	cmd, handled := p.Update(keyMsg(">"), k)
	if !handled || p.section != 1 || p.view.YOffset != 0 {
		t.Fatalf("> : handled %v, section %d, offset %d; want section 1 at its top", handled, p.section, p.view.YOffset)
	}
	if cmd == nil {
		t.Fatal("> should render the section after the next one ahead")
	}
}

func TestGoldenExercisesLayer(t *testing.T) {
	clock := &testClock{now: t0}
	x := exercisesLayer{st: NewStyles(asciiRenderer()), lang: "en", clock: clock.Now}
	if news, _ := x.set(*lab31Exercises()); len(news) != 0 {
		t.Fatalf("the first progress is not news: %q", news)
	}
	x.SetSize(60, 12)
	golden.RequireEqual(t, strings.Join(x.View(), "\n"))

	news, bad := x.set(withStatus(lab31Exercises(), "results", "pass", t0))
	if len(news) != 1 || bad || !strings.Contains(news[0], "results passed") {
		t.Fatalf("results passing: news %q, bad %v", news, bad)
	}
}

func TestStartupAlone(t *testing.T) {
	clock := &testClock{now: t0}
	s := newStartup([]string{"etcd", "kube-apiserver"}, NewStyles(asciiRenderer()), clock.Now, "lab 4.4")
	s.SetSize(40, 10)
	s, _ = s.Update(StepDoneMsg{Step: "etcd", Took: time.Second})
	s, _ = s.Update(StepDetailMsg{Step: "CRDs", Detail: "3 kinds"}) // a step not announced is added
	clock.now = t0.Add(2 * time.Second)
	s, _ = s.Update(StartFailedMsg{Err: errors.New("port in use")})
	view := s.View()
	for _, want := range []string{"The lab could not start", "port in use", "CRDs", "elapsed 2s"} {
		if !strings.Contains(view, want) {
			t.Errorf("start-up screen lacks %q:\n%s", want, view)
		}
	}
	for _, l := range strings.Split(view, "\n") {
		if w := ansi.StringWidth(l); w > 40 {
			t.Errorf("line %d cells wide on a 40-cell screen: %q", w, l)
		}
	}
	if _, cmd := s.Update(s.spinner.Tick()); cmd == nil {
		t.Error("the spinner stopped ticking")
	}
}

// TestResizeSizesEveryComponentOnce: the layout and the layers' sizes are
// set on the resize, so View only draws.
func TestResizeSizesEveryComponentOnce(t *testing.T) {
	m := newWorkspaceModel(100, 30, &testClock{now: t0}, "3.1", "en", lab31Exercises())
	// 30 rows: 26 between header and footer, 10 of them (2/5) above the layer, its frame 2.
	if m.layout() != layoutMedium || m.lesson.width != 98 || m.lesson.height != 14 ||
		m.exercises.width != 98 || m.exercises.height != 14 {
		t.Fatalf("layout %d, lesson %dx%d, exercises %dx%d; want medium, both 98x14",
			m.layout(), m.lesson.width, m.lesson.height, m.exercises.width, m.exercises.height)
	}
	m = update(m, tea.WindowSizeMsg{Width: 60, Height: 16})
	if m.layout() != layoutCompact || m.exercises.width != 58 || m.exercises.height != 10 {
		t.Fatalf("60x16: layout %d, exercises %dx%d; want compact, 58x10", m.layout(), m.exercises.width, m.exercises.height)
	}
}
