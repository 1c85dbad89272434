package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/operator-lab/lab/internal/l10n"
)

// lab31Exercises is a 3.1 workspace part way through: two passed, the
// third failing (so it is next), the last never checked.
func lab31Exercises() *ExercisesMsg {
	return &ExercisesMsg{Workspace: "./lab-3.1", Created: true, Exercises: []Exercise{
		{Number: 1, ID: "manager", Title: "The Manager", Files: []string{"manager/manager.go"}, Status: "pass", CheckedAt: t0.Add(-10 * time.Minute)},
		{Number: 2, ID: "basics", Title: "Reconcile basics", Files: []string{"basics/reconciler.go"}, Status: "pass", CheckedAt: t0.Add(-3 * time.Minute)},
		{Number: 3, ID: "results", Title: "Choosing the Result", Files: []string{"results/reconciler.go"}, Status: "fail", CheckedAt: t0.Add(-12 * time.Second)},
		{Number: 4, ID: "reads", Title: "Cache vs API reads", Files: []string{"reads/reconciler.go"}},
	}}
}

// lab44ExercisesRussian is a 4.4 workspace in Russian with every status:
// more exercises than a small pane has rows for their files.
func lab44ExercisesRussian() *ExercisesMsg {
	ex := []Exercise{
		{ID: "statemachine", Title: "Конечный автомат", Files: []string{"statemachine/machine.go"}, Status: "pass", CheckedAt: t0.Add(-2 * time.Hour)},
		{ID: "dependency", Title: "Внешняя зависимость", Files: []string{"dependency/reconciler.go"}, Status: "pass", CheckedAt: t0.Add(-25 * time.Minute)},
		{ID: "idempotency", Title: "Идемпотентность", Files: []string{"idempotency/secret.go"}, Status: "error", CheckedAt: t0.Add(-40 * time.Second)},
		{ID: "backoff", Title: "Экспоненциальная задержка", Files: []string{"backoff/backoff.go"}, Status: "fail", CheckedAt: t0.Add(-3 * 24 * time.Hour)},
		{ID: "breaker", Title: "Circuit breaker", Files: []string{"breaker/breaker.go"}},
		{ID: "ratelimit", Title: "Ограничение частоты", Files: []string{"ratelimit/ratelimit.go"}},
		{ID: "together", Title: "Всё вместе", Files: []string{"together/reconciler.go"}},
	}
	for i := range ex {
		ex[i].Number = i + 1
	}
	return &ExercisesMsg{Workspace: "./lab-4.4", Exercises: ex}
}

// newWorkspaceModel is a live dashboard of a lab started in a workspace,
// running the learner's controller.
func newWorkspaceModel(w, h int, clock *clocktesting.FakePassiveClock, lab, lang string, ex *ExercisesMsg) Model {
	title := map[string]string{"3.1": "Controller Runtime deep dive", "4.4": "Advanced patterns"}[lab]
	m := New(Options{
		Header: Header{Lab: lab, Title: title, KubernetesVersion: "v1.37.2",
			Address: "https://127.0.0.1:40123", Started: t0.Add(-5 * time.Second), Operator: "your controller: results"},
		Controls:  newFakeControls(),
		Now:       clock.Now,
		Renderer:  asciiRenderer(),
		Lang:      lang,
		Exercises: ex,
	})
	return update(m, tea.WindowSizeMsg{Width: w, Height: h})
}

// exercisesFrame is the exercises layer's part of the screen.
func exercisesFrame(t *testing.T, view string) string {
	t.Helper()
	for _, title := range []string{"╭─ Exercises", "╭─ Упражнения"} {
		if i := strings.Index(view, title); i >= 0 {
			return view[i:]
		}
	}
	t.Fatalf("no exercises layer on screen:\n%s", view)
	return ""
}

// withStatus is the message with one exercise's status changed.
func withStatus(msg *ExercisesMsg, id, status string, at time.Time) ExercisesMsg {
	next := *msg
	next.Exercises = append([]Exercise(nil), msg.Exercises...)
	for i := range next.Exercises {
		if next.Exercises[i].ID == id {
			next.Exercises[i].Status, next.Exercises[i].CheckedAt = status, at
		}
	}
	return next
}

func TestGoldenExercises120x40(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	m := newWorkspaceModel(120, 40, clock, "3.1", "en", lab31Exercises())
	m = fold(m, lifecycleScript().Events())
	m, _ = press(m, "x")
	golden.RequireEqual(t, m.View())
}

func TestGoldenExercisesRussian80x24(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	m := newWorkspaceModel(80, 24, clock, "4.4", "ru", lab44ExercisesRussian())
	m = fold(m, lifecycleScript().Events())
	m, _ = press(m, "x")
	golden.RequireEqual(t, m.View())
}

func TestExercisesKeyTogglesTheLayer(t *testing.T) {
	m := newWorkspaceModel(120, 40, clocktesting.NewFakePassiveClock(t0), "3.1", "en", lab31Exercises())
	if strings.Contains(m.View(), "╭─ Exercises") {
		t.Fatal("the layer is open before x was pressed")
	}
	m, _ = press(m, "x")
	layer := exercisesFrame(t, m.View())
	for _, want := range []string{"workspace ./lab-3.1 · created just now · 2/4 passed", "next ▸ 3. Choosing the Result", "✗ failed", "12s ago",
		"edit results/reconciler.go", "· not checked", "lab check --watch", "lab hint"} {
		if !strings.Contains(layer, want) {
			t.Errorf("the layer lacks %q:\n%s", want, layer)
		}
	}
	if m.dash.activeTab() != paneSequence || m.dash.tabGroup() != nil {
		t.Error("the layer takes the tab group's slot, so tab should switch nothing")
	}
	m, _ = press(m, "x")
	if m.layer != layerNone || strings.Contains(m.View(), "╭─ Exercises") {
		t.Fatal("x did not close the layer")
	}
	m, _ = press(m, "x")
	m, _ = press(m, "esc")
	if m.layer != layerNone {
		t.Fatal("esc did not close the layer")
	}

	// The lesson and the exercises share one place: opening one closes the other.
	m, _ = press(m, "x")
	m = pressSettled(t, m, "L")
	if m.layer != layerLesson {
		t.Fatalf("L with the exercises open: layer %d, want the lesson", m.layer)
	}
	m, _ = press(m, "x")
	if m.layer != layerExercises {
		t.Fatalf("x with the lesson open: layer %d, want the exercises", m.layer)
	}
}

func TestExercisesKeyWithoutAWorkspace(t *testing.T) {
	m := newLiveModel(80, 24, clocktesting.NewFakePassiveClock(t0), newFakeControls())
	before := m.View()
	if strings.Contains(before, "x exercises") || strings.Contains(before, "ex ") {
		t.Fatalf("without a workspace the key or badge is offered:\n%s", before)
	}
	m, _ = press(m, "x")
	if m.layer != layerNone || strings.Contains(m.View(), "╭─ Exercises") {
		t.Fatal("x opened an empty layer")
	}
	if m.c.status.text != "no workspace, so no exercises to show" {
		t.Fatalf("status %q", m.c.status.text)
	}
	m, _ = press(m, "?")
	if strings.Contains(m.View(), "Exercises") {
		t.Fatal("the help lists the exercises without a workspace")
	}
}

func TestExercisesMsgAnnouncesWhatChanged(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	start := lab31Exercises()
	m := newWorkspaceModel(120, 40, clock, "3.1", "en", start)
	if m.c.status.text != "" {
		t.Fatalf("the first progress announced %q", m.c.status.text)
	}
	clock.SetTime(t0.Add(time.Minute))
	passed := withStatus(start, "results", "pass", clock.Now())
	m = update(m, passed)
	if m.c.status.text != "✓ results passed" || m.c.status.bad {
		t.Fatalf("status %q (bad %v)", m.c.status.text, m.c.status.bad)
	}
	if !strings.Contains(m.View(), "ex 3/4") {
		t.Fatal("the header badge did not count the new pass")
	}

	// A check with the same outcome changes nothing worth a line.
	m.c.status = status{}
	m = update(m, withStatus(&passed, "results", "pass", clock.Now().Add(time.Second)))
	if m.c.status.text != "" {
		t.Fatalf("an unchanged status announced %q", m.c.status.text)
	}

	failed := withStatus(&passed, "results", "fail", clock.Now())
	m = update(m, failed)
	if m.c.status.text != "✗ results failed — lab check says why" || !m.c.status.bad {
		t.Fatalf("status %q (bad %v)", m.c.status.text, m.c.status.bad)
	}
	m = update(m, withStatus(&failed, "results", "error", clock.Now()))
	if !strings.HasPrefix(m.c.status.text, "! results: the check could not run") || !m.c.status.bad {
		t.Fatalf("status %q (bad %v)", m.c.status.text, m.c.status.bad)
	}

	done := withStatus(&passed, "reads", "pass", clock.Now())
	m = update(m, done)
	if m.c.status.text != "✓ results passed · ✓ reads passed · every exercise passes" {
		t.Fatalf("status %q", m.c.status.text)
	}

	// A rebuilt progress file is said once, on the status line and in the layer.
	done.Notice = "the progress file was unreadable and has been rebuilt"
	m = update(m, done)
	if m.c.status.text != done.Notice || !m.c.status.bad {
		t.Fatalf("status %q", m.c.status.text)
	}
	m, _ = press(m, "x")
	if layer := exercisesFrame(t, m.View()); !strings.Contains(layer, "! "+done.Notice) || !strings.Contains(layer, "4/4 passed · all done") {
		t.Fatalf("layer:\n%s", layer)
	}
	if strings.Contains(m.View(), "next ▸") {
		t.Fatal("an exercise is marked next when every one passes")
	}
}

func TestExercisesMsgWithoutAPreviousOneIsNotAnnounced(t *testing.T) {
	m := newLiveModel(80, 24, clocktesting.NewFakePassiveClock(t0), newFakeControls())
	m = update(m, *lab31Exercises())
	if m.c.status.text != "" {
		t.Fatalf("the first progress announced %q", m.c.status.text)
	}
	if !strings.Contains(m.View(), "ex 2/4") || !strings.Contains(m.View(), "x exercises") {
		t.Fatalf("the workspace is not offered:\n%s", m.View())
	}
}

func TestExercisesMsgIsCopied(t *testing.T) {
	msg := lab31Exercises()
	m := newWorkspaceModel(120, 40, clocktesting.NewFakePassiveClock(t0), "3.1", "en", nil)
	m = update(m, *msg)
	msg.Exercises[0].Status = "fail" // the sender reuses its slice
	if passedCount(m.exercises.ws.Exercises) != 2 {
		t.Fatal("the model shares the sender's slice")
	}
}

func TestHeaderShowsTheOperatorAndTheBadge(t *testing.T) {
	m := newWorkspaceModel(120, 40, clocktesting.NewFakePassiveClock(t0), "3.1", "en", lab31Exercises())
	for _, c := range []struct {
		w, h int
		want []string
	}{
		{140, 40, []string{"Controller Runtime deep dive", "Kubernetes v1.37.2", "https://127.0.0.1:40123"}},
		// Narrower, the address goes first, then the lab's title.
		{120, 40, []string{"Controller Runtime deep dive", "k8s v1.37.2"}},
		// At 80 the timescale joins the first line (the switch line has no
		// room for it) and the version makes way for it.
		{80, 24, []string{"timescale=10×"}},
		{60, 16, nil},
	} {
		m = update(m, tea.WindowSizeMsg{Width: c.w, Height: c.h})
		line := strings.Split(m.View(), "\n")[0]
		if w := ansi.StringWidth(line); w > c.w {
			t.Errorf("%d: the header is %d wide: %q", c.w, w, line)
		}
		for _, want := range append(c.want, "lab 3.1", "your controller: results", "ex 2/4  ● LIVE", "up 5s") {
			if !strings.Contains(line, want) {
				t.Errorf("%d: the header lacks %q: %q", c.w, want, line)
			}
		}
	}
}

func TestExercisesLayerFitsEveryLayout(t *testing.T) {
	for _, lang := range []string{"en", "ru"} {
		m := newWorkspaceModel(120, 40, clocktesting.NewFakePassiveClock(t0), "4.4", lang, lab44ExercisesRussian())
		m, _ = press(m, "x")
		for _, size := range [][2]int{{200, 60}, {120, 40}, {120, 34}, {100, 30}, {80, 24}, {70, 20}, {60, 16}, {59, 16}, {30, 8}} {
			m = update(m, tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			view := m.View()
			lines := strings.Split(view, "\n")
			if m.layout() == layoutTooSmall {
				if !strings.Contains(view, fmt.Sprintf("%d×%d", size[0], size[1])) { // the too-small message names the size
					t.Errorf("%s %dx%d: no too-small message", lang, size[0], size[1])
				}
				continue
			}
			if len(lines) != size[1] {
				t.Errorf("%s %dx%d: %d lines", lang, size[0], size[1], len(lines))
			}
			for i, l := range lines {
				if w := ansi.StringWidth(l); w > size[0] {
					t.Errorf("%s %dx%d: line %d is %d wide", lang, size[0], size[1], i, w)
				}
			}
			// Every exercise keeps its row, and the next one its files.
			layer := exercisesFrame(t, view)
			for _, want := range []string{" 1. ", " 7. ", "idempotency/secret.go"} {
				if !strings.Contains(layer, want) {
					t.Errorf("%s %dx%d: the layer lacks %q:\n%s", lang, size[0], size[1], want, layer)
				}
			}
		}
	}
}

func TestHelpListsTheExercisesKey(t *testing.T) {
	m := newWorkspaceModel(120, 40, clocktesting.NewFakePassiveClock(t0), "3.1", "en", lab31Exercises())
	if !strings.Contains(m.View(), "x exercises") {
		t.Fatal("the help line does not offer x")
	}
	m, _ = press(m, "?")
	view := m.View()
	for _, want := range []string{"Lesson & exercises", "x         exercises: your workspace's progress"} {
		if !strings.Contains(view, want) {
			t.Errorf("the overlay lacks %q", want)
		}
	}
	m, _ = press(m, "?")
	m, _ = press(m, "x")
	if !strings.Contains(m.View(), "x close exercises") {
		t.Fatal("the help line does not say x closes the layer")
	}
	m, _ = press(m, "?")
	if !strings.Contains(m.View(), "esc       close: the lesson or the exercises") {
		t.Error("the overlay does not say how to close the layer")
	}
}

// TestFitRankedLeavesOutWholeRanks: lines of one kind go together, lowest
// rank first, and the kept lines stay in order.
func TestFitRankedLeavesOutWholeRanks(t *testing.T) {
	lines := []rankedLine{{rankKeep, "a"}, {rankSpacing, ""}, {rankKeep, "b"}, {rankFiles, "b.go"}, {rankKeep, "c"},
		{rankFiles, "c.go"}, {rankNextFiles, "next.go"}, {rankSpacing, ""}, {rankHowTo, "how"}}
	for h, want := range map[int]string{
		9: "a,,b,b.go,c,c.go,next.go,,how",
		7: "a,b,b.go,c,c.go,next.go,how",
		5: "a,b,c,next.go,how",
		4: "a,b,c,next.go",
		2: "a,b",
	} {
		if got := strings.Join(fitRanked(lines, h), ","); got != want {
			t.Errorf("h=%d: %s, want %s", h, got, want)
		}
	}
}

func TestAgoText(t *testing.T) {
	for _, c := range []struct {
		d      time.Duration
		en, ru string
	}{
		{-time.Second, "just now", "только что"},
		{4 * time.Second, "just now", "только что"},
		{12 * time.Second, "12s ago", "12 с назад"},
		{3*time.Minute + 59*time.Second, "3m ago", "3 мин назад"},
		{2 * time.Hour, "2h ago", "2 ч назад"},
		{50 * time.Hour, "2d ago", "2 дн назад"},
	} {
		if got := agoText(c.d, l10n.For("en")); got != c.en {
			t.Errorf("%v en: %q, want %q", c.d, got, c.en)
		}
		if got := agoText(c.d, l10n.For("ru")); got != c.ru {
			t.Errorf("%v ru: %q, want %q", c.d, got, c.ru)
		}
	}
}
