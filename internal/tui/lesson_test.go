package tui

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/muesli/termenv"

	"github.com/operator-lab/lab/content"
)

// newLessonModel is a live dashboard of a lab with its lesson in lang.
func newLessonModel(w, h int, clock *clocktesting.FakePassiveClock, controls Controls, lab, lang string) Model {
	title := map[string]string{"3.1": "Controller Runtime deep dive", "4.4": "Advanced patterns"}[lab]
	m := New(Options{
		Header: Header{Lab: lab, Title: title, KubernetesVersion: "v1.37.2",
			Address: "https://127.0.0.1:40123", Started: t0},
		Controls: controls,
		Now:      clock.Now,
		Renderer: asciiRenderer(),
		Lang:     lang,
	})
	return update(m, tea.WindowSizeMsg{Width: w, Height: h})
}

// settle runs the lesson's background renders a command asked for, as the
// bubbletea runtime would, until none is left.
func settle(t *testing.T, m Model, cmd tea.Cmd) Model {
	t.Helper()
	for cmd != nil {
		msg, ok := cmd().(lessonRenderedMsg)
		if !ok {
			t.Fatalf("expected a lesson render, got %T", msg)
		}
		var next tea.Model
		next, cmd = m.Update(msg)
		m = next.(Model)
	}
	return m
}

// pressSettled presses a key and lets the lesson finish rendering.
func pressSettled(t *testing.T, m Model, keys string) Model {
	t.Helper()
	m, cmd := press(m, keys)
	return settle(t, m, cmd)
}

func mustLoad(t *testing.T, lab, lang string) *content.Lesson {
	t.Helper()
	l, err := content.Load(lab, lang)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// firstTextLine is how a section's text starts in a pane of this inner width.
func firstTextLine(t *testing.T, s content.Section, innerW int) string {
	t.Helper()
	out, err := content.Render(lessonMarkdown(s), content.RenderOptions{Width: renderWidth(innerW)})
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(textLines(out)[0])
}

// lessonFrame is the lesson pane's part of the screen: its title line and below.
func lessonFrame(t *testing.T, view string) string {
	t.Helper()
	i := strings.Index(view, "╭─ Lesson")
	if i < 0 {
		i = strings.Index(view, "╭─ Урок")
	}
	if i < 0 {
		t.Fatalf("no lesson pane on screen:\n%s", view)
	}
	return view[i:]
}

func TestLessonPaneOpensNavigatesAndScrolls(t *testing.T) {
	lesson := mustLoad(t, "4.4", "en")
	m := newLessonModel(120, 40, clocktesting.NewFakePassiveClock(t0), newFakeControls(), "4.4", "en")
	if strings.Contains(m.View(), "╭─ Lesson") {
		t.Fatal("the lesson pane is open before L was pressed")
	}
	m = pressSettled(t, m, "L")
	pane := lessonFrame(t, m.View())
	first := lesson.Sections[0]
	if !strings.Contains(pane, fmt.Sprintf("Lesson 4.4 · 1/%d %s", len(lesson.Sections), first.Title)) {
		t.Fatalf("title does not name the lesson and section:\n%s", pane)
	}
	if want := firstTextLine(t, first, 118); !strings.Contains(pane, want) {
		t.Fatalf("the pane does not start with the section's text %q:\n%s", want, pane)
	}

	// Sections: > and . forward, < and , back, stopping at the ends.
	m = pressSettled(t, m, ">")
	m = pressSettled(t, m, ".")
	third := lesson.Sections[2]
	pane = lessonFrame(t, m.View())
	if !strings.Contains(pane, fmt.Sprintf("3/%d %s", len(lesson.Sections), third.Title)) || !strings.Contains(pane, firstTextLine(t, third, 118)) {
		t.Fatalf("after > . the pane is not at section 3 (%s):\n%s", third.Title, pane)
	}
	for i := 0; i < 5; i++ {
		m = pressSettled(t, m, ",")
	}
	m = pressSettled(t, m, "<")
	if m.lesson.section != 0 {
		t.Fatalf("section %d after going back past the start, want 0", m.lesson.section)
	}

	// Scrolling: the first line leaves the view, and the title says where we are.
	start := firstTextLine(t, first, 118)
	m, _ = press(m, "j")
	m, _ = press(m, "down")
	if m.lesson.view.YOffset != 2 || strings.Contains(lessonFrame(t, m.View()), start) {
		t.Fatalf("two lines down: offset %d, and the first line %q should be gone", m.lesson.view.YOffset, start)
	}
	m, _ = press(m, "k")
	if m.lesson.view.YOffset != 1 {
		t.Fatalf("offset %d after k, want 1", m.lesson.view.YOffset)
	}
	for i := 0; i < 50; i++ {
		m, _ = press(m, "pgdown")
	}
	if !m.lesson.view.AtBottom() || !strings.Contains(m.View(), "· end ─") {
		t.Fatalf("pgdown to the end: at bottom %v\n%s", m.lesson.view.AtBottom(), lessonFrame(t, m.View()))
	}
	// A new section starts at its top.
	m = pressSettled(t, m, ">")
	if m.lesson.view.YOffset != 0 {
		t.Fatalf("section 2 opened at offset %d, want its top", m.lesson.view.YOffset)
	}

	// L closes it; the panes it covered come back.
	m, _ = press(m, "L")
	if strings.Contains(m.View(), "╭─ Lesson") || !strings.Contains(m.View(), "Objects & phases") {
		t.Fatal("L did not close the lesson pane")
	}
	m = pressSettled(t, m, "L")
	if m.lesson.section != 1 {
		t.Fatalf("reopened at section %d, want the one left open (1)", m.lesson.section)
	}
	m, _ = press(m, "esc")
	if m.layer != layerNone {
		t.Fatal("esc did not close the lesson pane")
	}
}

func TestArrowsSelectObjectsUntilTheLessonOpens(t *testing.T) {
	m := newLessonModel(120, 40, clocktesting.NewFakePassiveClock(t0), newFakeControls(), "4.4", "en")
	m = fold(m, lifecycleScript().Events())
	m, _ = press(m, "k")
	if m.dash.focus.selected != "lab/db-1" {
		t.Fatalf("k selected %q, want lab/db-1", m.dash.focus.selected)
	}
	m = pressSettled(t, m, "L")
	m, _ = press(m, "j")
	if m.dash.focus.selected != "lab/db-1" || m.lesson.view.YOffset != 1 {
		t.Fatalf("with the lesson open, j should scroll (offset %d) and keep the selection (%q)", m.lesson.view.YOffset, m.dash.focus.selected)
	}
}

func TestLessonPaneSpeaksTheLessonsLanguage(t *testing.T) {
	lesson := mustLoad(t, "3.1", "ru")
	m := newLessonModel(120, 40, clocktesting.NewFakePassiveClock(t0), newFakeControls(), "3.1", "ru")
	m = pressSettled(t, m, "L")
	pane := lessonFrame(t, m.View())
	if !strings.Contains(pane, fmt.Sprintf("Урок 3.1 · 1/%d %s", len(lesson.Sections), lesson.Sections[0].Title)) {
		t.Fatalf("title:\n%s", pane)
	}
	if !strings.Contains(pane, "▶ нажмите w, чтобы увидеть это") {
		t.Fatalf("the demo line is not in Russian:\n%s", pane)
	}
	m = pressSettled(t, m, ">") // manager: no demo
	if !strings.Contains(m.View(), "в этом разделе нет демонстрации") {
		t.Fatalf("a section without a demo should say so:\n%s", lessonFrame(t, m.View()))
	}
}

// TestLessonRendersAreCachedAndFollowTheWidth: the next section is
// rendered ahead, going back costs no render, and a resize renders again
// for the new width.
func TestLessonRendersAreCachedAndFollowTheWidth(t *testing.T) {
	m := newLessonModel(120, 40, clocktesting.NewFakePassiveClock(t0), newFakeControls(), "4.4", "en")
	m, cmd := press(m, "L")
	if cmd == nil || !strings.Contains(m.View(), "rendering…") {
		t.Fatal("opening the lesson should render it in the background and say so meanwhile")
	}
	m = settle(t, m, cmd)
	if _, ok := m.lesson.rendered[renderKey{section: 1, width: 118}]; !ok {
		t.Fatal("the next section was not rendered ahead")
	}
	m, cmd = press(m, ">")
	if cmd == nil {
		t.Fatal("reading on should render the section after next ahead")
	}
	m = settle(t, m, cmd)
	m, cmd = press(m, "<")
	if cmd != nil {
		t.Fatal("going back rendered again: the render was not kept")
	}
	next, cmd := m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	m = next.(Model)
	if cmd == nil {
		t.Fatal("a resize did not render for the new width")
	}
	if strings.Contains(m.View(), "rendering…") {
		t.Fatal("while the new width renders, the old render should stay on screen")
	}
	m = settle(t, m, cmd)
	if m.lesson.shown.width != 98 {
		t.Fatalf("shown for width %d, want 98", m.lesson.shown.width)
	}
}

func TestLessonPaneFitsEveryLayout(t *testing.T) {
	m := newLessonModel(120, 40, clocktesting.NewFakePassiveClock(t0), newFakeControls(), "4.4", "en")
	m = fold(m, lifecycleScript().Events())
	m = pressSettled(t, m, "L")
	for _, size := range [][2]int{{200, 60}, {120, 40}, {100, 30}, {80, 24}, {70, 20}, {60, 16}} {
		next, cmd := m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		m = settle(t, next.(Model), cmd)
		view := m.View()
		lines := strings.Split(view, "\n")
		if len(lines) != size[1] {
			t.Errorf("%dx%d: %d lines", size[0], size[1], len(lines))
		}
		for i, l := range lines {
			if w := ansi.StringWidth(l); w > size[0] {
				t.Errorf("%dx%d: line %d is %d wide", size[0], size[1], i, w)
			}
		}
		pane := lessonFrame(t, view)
		if !strings.Contains(pane, "▶ press w to see this") {
			t.Errorf("%dx%d: no demo line:\n%s", size[0], size[1], pane)
		}
		// The sequence stays in view beside the text where there is room.
		if hasSeq := strings.Contains(view, "Reconcile sequence"); hasSeq != (m.layout() != layoutCompact) {
			t.Errorf("%dx%d (layout %d): reconcile sequence shown = %v", size[0], size[1], m.layout(), hasSeq)
		}
	}
}

// demoCalls is what each scenario a lesson demo names does through
// Controls, after the demo's switches, when lab/db-1 is selected and the
// fake creates lab/db-2 next.
var demoCalls = map[string][]string{
	"":                {},
	"create":          {"create"},
	"update-burst":    {"burst lab/db-1 5"},
	"delete":          {"delete lab/db-1"},
	"not-found":       {"create", "delete lab/db-2"},
	"external-outage": {"external=down", "create"},
	"flaky-external":  {"external=flaky", "create", "create", "create"},
	"permanent-error": {"create-invalid"},
}

func TestLessonPaneWithoutALesson(t *testing.T) {
	// A replay whose lab is unknown offers no lesson.
	m := New(Options{Trace: lifecycleScript().Events(), Renderer: asciiRenderer(), Lang: "en"})
	m = update(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	m, _ = press(m, "L")
	if m.layer != layerNone || strings.Contains(m.View(), "L lesson") {
		t.Fatal("a lesson is offered for a trace of an unknown lab")
	}
	// A language that cannot be chosen: the pane says why.
	t.Setenv(content.LangEnv, "fr")
	m = newLessonModel(80, 24, clocktesting.NewFakePassiveClock(t0), newFakeControls(), "4.4", "")
	m, _ = press(m, "L")
	if pane := lessonFrame(t, m.View()); !strings.Contains(pane, `no lesson: LAB_LANG: unsupported language "fr"`) {
		t.Fatalf("pane:\n%s", pane)
	}
}

func TestLessonMarkdownLeavesOutTheHeadingAndTheHeadlessCommand(t *testing.T) {
	for _, lang := range content.Languages {
		for _, lab := range content.LessonIDs() {
			for _, s := range mustLoad(t, lab, lang).Sections {
				md := lessonMarkdown(s)
				if strings.Contains(md, "## "+s.Title) {
					t.Errorf("%s %s/%s: the heading is still in the text", lang, lab, s.ID)
				}
				if s.Demo != nil && strings.Contains(md, "lab "+strings.Join(s.Demo.RunArgs(), " ")) {
					t.Errorf("%s %s/%s: the `lab run` paragraph is still in the text", lang, lab, s.ID)
				}
				if !strings.Contains(md, firstWords(s.Body)) {
					t.Errorf("%s %s/%s: the body is missing", lang, lab, s.ID)
				}
			}
		}
	}
}

// firstWords is the start of a section's first line of text or code.
func firstWords(body string) string {
	for _, line := range strings.Split(body, "\n") {
		if words := strings.Fields(line); len(words) > 0 && !strings.HasPrefix(words[0], "```") {
			return strings.Join(words[:min(3, len(words))], " ")
		}
	}
	return body
}

// TestGoldenLessonPane80x24: the smallest comfortable terminal with the
// lesson open at a section with a demo, under the reconcile sequence.
func TestGoldenLessonPane80x24(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	m := newLessonModel(80, 24, clock, newFakeControls(), "4.4", "en")
	sc := lifecycleScript()
	m = fold(m, sc.Events())
	clock.SetTime(sc.Now().Add(300 * time.Millisecond))
	m = pressSettled(t, m, "L")
	m = pressSettled(t, m, ">")
	m = pressSettled(t, m, ">")
	golden.RequireEqual(t, m.View())
}

// TestGoldenLessonPaneRussian120x40: the full layout, in Russian, scrolled.
func TestGoldenLessonPaneRussian120x40(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	m := newLessonModel(120, 40, clock, newFakeControls(), "3.1", "ru")
	sc := lifecycleScript()
	m = fold(m, sc.Events())
	clock.SetTime(sc.Now().Add(300 * time.Millisecond))
	m = pressSettled(t, m, "L")
	for i := 0; i < 5; i++ {
		m = pressSettled(t, m, ">") // result: ctrl.Result and errors
	}
	m, _ = press(m, "pgdown")
	golden.RequireEqual(t, m.View())
}

// colourModel is a lesson model drawn in 256 colours on a dark background.
func colourModel(w, h int, lab, lang string) Model {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI256)
	r.SetHasDarkBackground(true)
	m := New(Options{Header: Header{Lab: lab}, Controls: newFakeControls(), Now: clocktesting.NewFakePassiveClock(t0).Now,
		Renderer: r, Lang: lang})
	return update(m, tea.WindowSizeMsg{Width: w, Height: h})
}

// TestLessonPaneTablesKeepIdentifiersWhole: the Result table of 3.1, in
// the pane at 80×24 and 120×40, with and without colour, never breaks an
// identifier: at 120 columns it takes the whole pane, not the prose's 100.
func TestLessonPaneTablesKeepIdentifiersWhole(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		for _, colour := range []bool{false, true} {
			m := newLessonModel(size[0], size[1], clocktesting.NewFakePassiveClock(t0), newFakeControls(), "3.1", "en")
			if colour {
				m = colourModel(size[0], size[1], "3.1", "en")
			}
			m = openDemoSection(t, m, "3.1", "result")
			text := strings.ReplaceAll(ansi.Strip(strings.Join(m.lesson.lines, "\n")), "`", "")
			table := text[strings.Index(text, "You return"):strings.Index(text, "The rate limiter's delay is")]
			for _, word := range []string{"ctrl.Result{RequeueAfter:", "reconcile.TerminalError(err)", "AddRateLimited,", "AddAfter(d),"} {
				if !strings.Contains(table, word) {
					t.Errorf("%dx%d, colour %v: %q is broken:\n%s", size[0], size[1], colour, word, table)
				}
			}
			if size[0] == 120 {
				widest := 0
				for _, l := range strings.Split(table, "\n") {
					widest = max(widest, ansi.StringWidth(strings.TrimRight(l, " ")))
				}
				if inner := m.lesson.width; widest <= renderWidth(inner) {
					t.Errorf("120x40, colour %v: the table is %d wide in a pane %d wide: it keeps to the prose's width", colour, widest, inner)
				}
			}
		}
	}
}

// TestLessonPaneLinesNeverEndInALoneParen: inline code is not padded with
// spaces, which the wrapper broke lines at, leaving "(" or "):" alone.
func TestLessonPaneLinesNeverEndInALoneParen(t *testing.T) {
	for _, width := range []int{80, 100, 120} {
		m := colourModel(width, 40, "3.1", "en")
		m = openDemoSection(t, m, "3.1", "result")
		for _, l := range m.lesson.lines {
			l = strings.TrimSpace(ansi.Strip(l))
			if strings.HasSuffix(l, "(") || strings.HasPrefix(l, "):") || strings.HasPrefix(l, ").") {
				t.Errorf("width %d: %q", width, l)
			}
		}
	}
}

// TestLessonPaneWithoutColourMarksCode: with NO_COLOR (no colour profile)
// inline code keeps its backticks and code blocks have a bar on their
// left, so that code does not pass for prose.
func TestLessonPaneWithoutColourMarksCode(t *testing.T) {
	m := newLessonModel(120, 40, clocktesting.NewFakePassiveClock(t0), newFakeControls(), "3.1", "en")
	m = openDemoSection(t, m, "3.1", "result")
	text := strings.Join(m.lesson.lines, "\n")
	for _, want := range []string{"When `Reconcile` returns", "  │ // Don't do this: the error makes the controller ignore RequeueAfter.",
		"  │ return ctrl.Result{RequeueAfter: 5 * time.Second}, err"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in the pane:\n%s", want, text)
		}
	}
	if strings.Contains(text, "│ When") || strings.Contains(text, "│ The same decision") {
		t.Errorf("prose has the code bar:\n%s", text)
	}
}
