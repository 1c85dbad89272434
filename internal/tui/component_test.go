package tui

import (
	"errors"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/operator-lab/lab/internal/l10n"
	"github.com/operator-lab/lab/internal/tui/state"
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

	p.configure(true)
	if _, handled := p.Update(keyMsg("j")); !handled || p.view.YOffset != 1 {
		t.Fatalf("j: handled %v, offset %d; want handled at offset 1", handled, p.view.YOffset)
	}
	if _, handled := p.Update(keyMsg("c")); handled {
		t.Fatal("c is the root's key (create), the pane must leave it")
	}
	cmd, handled := p.Update(keyMsg(">"))
	if !handled || p.section != 1 || p.view.YOffset != 0 {
		t.Fatalf("> : handled %v, section %d, offset %d; want section 1 at its top", handled, p.section, p.view.YOffset)
	}
	if cmd == nil {
		t.Fatal("> should render the section after the next one ahead")
	}
}

func TestGoldenExercisesLayer(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	x := newExercisesLayer(NewStyles(asciiRenderer()), l10n.For("en"), clock.Now)
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
	clock := clocktesting.NewFakePassiveClock(t0)
	s := newStartup([]string{"etcd", "kube-apiserver"}, NewStyles(asciiRenderer()), l10n.Printer{}, clock.Now, "lab 4.4")
	s.SetSize(40, 10)
	s, _ = s.Update(StepDoneMsg{Step: "etcd", Took: time.Second})
	s, _ = s.Update(StepDetailMsg{Step: "CRDs", Detail: "3 kinds"}) // a step not announced is added
	clock.SetTime(t0.Add(2 * time.Second))
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
	m := newWorkspaceModel(100, 30, clocktesting.NewFakePassiveClock(t0), "3.1", "en", lab31Exercises())
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

// testCommon is what a root would share with its components: no colour,
// the test clock, and the lifecycle script folded in.
func testCommon(clock *clocktesting.FakePassiveClock) *common {
	c := newCommon(NewStyles(asciiRenderer()), state.Limits{}, clock.Now, false)
	sc := lifecycleScript()
	c.state.Apply(sc.Events()...)
	clock.SetTime(sc.Now().Add(300 * time.Millisecond))
	c.board = newFakeControls().Switches()
	return c
}

// TestGoldenDashboardAlone: the medium layout with the tab group, drawn
// by the dashboard on its own; tab moves the group, the arrows the
// selection the panes follow.
func TestGoldenDashboardAlone(t *testing.T) {
	d := newDashboard(testCommon(clocktesting.NewFakePassiveClock(t0)))
	d.SetSize(90, 22)
	d.configure(false, false)
	if _, handled := d.Update(tea.KeyMsg{Type: tea.KeyTab}); !handled || d.activeTab() != paneBackoff {
		t.Fatalf("tab: handled %v, active %d; want the retry delays", handled, d.activeTab())
	}
	d.Update(keyMsg("k"))
	if d.focus.selected != "lab/db-1" {
		t.Fatalf("k selected %q, want lab/db-1", d.focus.selected)
	}
	if _, handled := d.Update(keyMsg("c")); handled {
		t.Fatal("c is the live controls' key, the dashboard must leave it")
	}
	view := d.View()
	if lines := strings.Split(view, "\n"); len(lines) != 22 {
		t.Fatalf("%d lines, want the 22 it was given", len(lines))
	}
	golden.RequireEqual(t, view)
}

// TestGoldenPanesAlone draws each pane at one size, without a dashboard.
func TestGoldenPanesAlone(t *testing.T) {
	c := testCommon(clocktesting.NewFakePassiveClock(t0))
	f := &focus{selected: "lab/db-2"}
	for name, p := range map[string]paneComponent{
		"sequence": &sequencePane{c: c, f: f},
		"queue":    &queuePane{c: c},
		"objects":  &objectsPane{c: c, f: f},
		"backoff":  &backoffPane{c: c, f: f},
		"patterns": &patternsPane{c: c},
	} {
		t.Run(name, func(t *testing.T) {
			p.SetSize(64, 14)
			lines := p.View()
			if len(lines) > 14 {
				t.Fatalf("%d lines in a pane of 14", len(lines))
			}
			golden.RequireEqual(t, p.Title()+"\n"+strings.Join(lines, "\n"))
		})
	}
}

// TestGoldenHelpAlone: the overlay lays out the groups it is given for
// its size, and only ? and esc close it.
func TestGoldenHelpAlone(t *testing.T) {
	c := testCommon(clocktesting.NewFakePassiveClock(t0))
	d, l := newDashboard(c), newLive(c, &focus{}, nil)
	c.board = newFakeControls().Switches()
	d.SetSize(80, 20)
	d.configure(false, false)
	l.configure()
	h := newHelpLayer(c, d.panes)
	h.SetSize(80, 20)
	h.setGroups([]helpGroup{{"Switches", l.FullHelp()[0]}, {"View", d.FullHelp()[0]}, {"Nothing", []key.Binding{disabled()}}})
	if strings.Contains(h.View(), "Nothing") {
		t.Fatal("a group with no key that applies is shown")
	}
	for _, k := range []string{"c", "q", "L"} {
		if h.Update(keyMsg(k)) {
			t.Fatalf("%s closed the help", k)
		}
	}
	if !h.Update(keyMsg("?")) || !h.Update(tea.KeyMsg{Type: tea.KeyEsc}) {
		t.Fatal("? and esc should close the help")
	}
	golden.RequireEqual(t, h.View())
}

func disabled() key.Binding {
	b := bind([]string{"z"}, "z", "nothing")
	b.SetEnabled(false)
	return b
}

// TestGoldenReplayAlone: the replay's footer line and badge after two
// reconciles and one event, and play stopping at the end of the trace.
func TestGoldenReplayAlone(t *testing.T) {
	c := newCommon(NewStyles(asciiRenderer()), state.Limits{}, nil, true)
	trace := lifecycleScript().Events()
	r := newReplay(c, trace)
	c.now = r.now
	r.SetSize(100, 1)
	for _, k := range []tea.KeyMsg{keyMsg("]"), keyMsg("]"), {Type: tea.KeyRight}} {
		if _, handled := r.Update(k); !handled {
			t.Fatalf("%s not handled", k)
		}
	}
	if c.state.Totals().Events != uint64(r.cursor) {
		t.Fatalf("state holds %d events, the cursor is at %d", c.state.Totals().Events, r.cursor)
	}
	golden.RequireEqual(t, r.View()+"\n"+r.badge())

	r.seek(len(trace) - 1)
	if cmd, _ := r.Update(keyMsg(" ")); cmd == nil || !r.playing {
		t.Fatal("space should play")
	}
	if r.Update(tickMsg(t0)); r.playing || !r.atEnd() {
		t.Fatalf("after the last event: playing %v, at end %v", r.playing, r.atEnd())
	}
}
