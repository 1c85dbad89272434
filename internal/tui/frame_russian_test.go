package tui

import (
	"strings"
	"testing"

	clocktesting "k8s.io/utils/clock/testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/operator-lab/lab/observe"
)

// The frame in Russian: the header, the footer, the ? overlay, the status
// line, the start-up screen and the replay's controls follow --lang ru
// (the dashboard's Russian goldens, with the panes, are panes_russian_test.go's).

// newFrameModel is newLiveModel in a language, with the given controls.
func newFrameModel(lang string, w, h int, clock *clocktesting.FakePassiveClock, controls Controls) Model {
	m := New(Options{
		Header: Header{Lab: "4.4", Title: "Advanced patterns", KubernetesVersion: "v1.37.2",
			Address: "https://127.0.0.1:40123", Started: t0},
		Controls: controls,
		Now:      clock.Now,
		Renderer: asciiRenderer(),
		Lang:     lang,
	})
	return update(m, tea.WindowSizeMsg{Width: w, Height: h})
}

func TestGoldenHelpOverlayRussian120x40(t *testing.T) {
	m := newFrameModel("ru", 120, 40, clocktesting.NewFakePassiveClock(t0), newFakeControls())
	m, _ = press(m, "?")
	golden.RequireEqual(t, m.View())
}

// frameEnglish are phrases of the frame's English: none may show in Russian.
var frameEnglish = []string{
	// header and footer
	"● LIVE", "PAUSED", "waiting at the gate", "STOPPED", "NO CONTROL PLANE", " up ", " events", " reconciles",
	"all keys", " quit", "create", "pause", "step",
	// the ? overlay
	"Switches", "Objects & step-through", "View", "What each pane shows", "another object", "this help",
	"or esc closes", "circuit breaker on/off", "each reconcile across", "keys waiting for a worker",
	// status lines
	"paused:", "resumed:", "stepped:", "step works while paused", "does nothing here", "belongs to lab",
	"the simulated external system", "is already at its", "created object", "watch the sequence pane",
	"no object selected", "the operator stopped", "control plane answers",
	// start-up, replay, too small
	"Starting your lab", "elapsed", "REPLAY", "start of trace", "event 1/", "prev event", "Terminal too small",
}

// frameScreens are the frame in lang, in the states a learner meets it:
// the dashboard live, paused and stopped, the ? overlay, status lines of
// the keys, the start-up screen, a replay and a terminal too small.
func frameScreens(t *testing.T, lang string) map[string]string {
	t.Helper()
	clock := clocktesting.NewFakePassiveClock(t0)
	fake := newFakeControls()
	m := newFrameModel(lang, 120, 40, clock, fake)
	m = fold(m, lifecycleScript().Events())
	screens := map[string]string{"dashboard": frameLines(m.View())}
	status := func(name string, keys ...string) {
		for _, k := range keys {
			m, _ = press(m, k)
		}
		m = echo(m, fake)
		screens[name] = frameLines(m.View())
	}
	status("step before pause", "s")
	status("pause", "p")
	status("step", "s")
	status("resume", "p")
	status("external down", "e")
	status("timescale at its fastest", "+", "+", "+", "+")
	var cmd tea.Cmd
	m, cmd = press(m, "c")
	status("creating")
	m = update(m, cmd())
	status("created")
	m = update(m, ControlPlaneMsg{Lost: true, Why: "no answer from 127.0.0.1:40123"})
	status("no control plane")
	m = update(m, ControlPlaneMsg{})
	status("control plane again")
	m = update(m, eventsClosedMsg{})
	status("stopped")
	m, _ = press(m, "?")
	screens["help"] = m.View()

	lab31 := New(Options{Header: Header{Lab: "3.1"}, Controls: &lab31Controls{newFakeControls()}, Renderer: asciiRenderer(),
		Lang: lang, Now: clock.Now})
	lab31 = update(lab31, tea.WindowSizeMsg{Width: 120, Height: 40})
	lab31, _ = press(lab31, "b")
	screens["a switch of another lab"] = frameLines(lab31.View())
	lab31, _ = press(lab31, "u")
	screens["no object"] = frameLines(lab31.View())

	start := New(Options{Header: Header{Lab: "4.4"}, Startup: []string{"etcd"}, Renderer: asciiRenderer(), Lang: lang, Now: clock.Now})
	screens["start-up"] = update(start, tea.WindowSizeMsg{Width: 120, Height: 40}).View()

	replay := update(New(Options{Header: Header{Source: "trace.jsonl"}, Trace: lifecycleScript().Events(), Renderer: asciiRenderer(), Lang: lang}),
		tea.WindowSizeMsg{Width: 120, Height: 40})
	screens["replay at its start"] = frameLines(replay.View())
	replay, _ = press(replay, "right")
	screens["replay"] = frameLines(replay.View())
	replay, _ = press(replay, "?")
	screens["replay help"] = replay.View()

	screens["too small"] = update(m, tea.WindowSizeMsg{Width: 50, Height: 12}).View()
	return screens
}

// frameLines are the header's two lines and the footer's two: the
// dashboard's panes between them are not the frame's.
func frameLines(view string) string {
	lines := strings.Split(view, "\n")
	return strings.Join(append(lines[:2:2], lines[len(lines)-2:]...), "\n")
}

// lab31Controls are the fake lab without the switches lab 3.1's
// controller does not read.
type lab31Controls struct{ *fakeControls }

func (c *lab31Controls) Switches() []Switch {
	var out []Switch
	for _, s := range c.fakeControls.Switches() {
		if s.Name == "requeue" || s.Name == "external" || s.Name == "timescale" {
			out = append(out, s)
		}
	}
	return out
}

// TestFrameSpeaksRussian: with --lang ru no phrase of the frame's English
// is left on any of its screens, and each says something in Russian; in
// English every phrase checked for is one the frame does show.
func TestFrameSpeaksRussian(t *testing.T) {
	russian := map[string]string{
		"dashboard":                "● ЭФИР",
		"step before pause":        "шаг работает только на паузе",
		"pause":                    "ПАУЗА",
		"step":                     "одно согласование пропущено",
		"resume":                   "пауза снята",
		"external down":            "имитируемая внешняя система теперь down",
		"timescale at its fastest": "уже на самом быстром значении",
		"creating":                 "создан объект…",
		"created":                  "смотрите панель «Согласования по шагам»",
		"stopped":                  "■ ОСТАНОВЛЕН",
		"no control plane":         "✕ НЕТ CONTROL PLANE",
		"control plane again":      "control plane снова отвечает",
		"help":                     "Что показывает каждая панель",
		"a switch of another lab":  "относится к лаборатории 4.4",
		"no object":                "объект не выбран",
		"start-up":                 "Запускаем вашу лабораторию",
		"replay at its start":      "начало записи",
		"replay":                   "событие 1/",
		"replay help":              "Воспроизведение",
		"too small":                "Терминал слишком мал",
	}
	ru := frameScreens(t, "ru")
	for name, screen := range ru {
		want, ok := russian[name]
		if !ok {
			t.Errorf("no Russian expected on screen %q", name)
		}
		if !strings.Contains(screen, want) {
			t.Errorf("%s in Russian lacks %q:\n%s", name, want, screen)
		}
		for _, en := range frameEnglish {
			if strings.Contains(screen, en) {
				t.Errorf("%s in Russian shows English %q:\n%s", name, en, screen)
			}
		}
	}
	// The phrases are the frame's: each shows in English somewhere.
	all := ""
	for _, screen := range frameScreens(t, "en") {
		all += screen
	}
	for _, en := range frameEnglish {
		if !strings.Contains(all, en) {
			t.Errorf("English %q is on none of the frame's screens: the check is moot", en)
		}
	}
}

// TestRussianHelpListsEveryKeyThatWorks is TestHelpListsEveryKeyThatWorks
// in Russian: every key is listed under its Russian name.
func TestRussianHelpListsEveryKeyThatWorks(t *testing.T) {
	for _, mode := range helpModes {
		for _, size := range [][2]int{{80, 24}, {120, 40}} {
			m := helpModelIn(t, "ru", mode.replay, mode.lesson, mode.workspace, size[0], size[1])
			if m.keys.Help.Help().Desc != "все клавиши" {
				t.Errorf("%s: the ? key is named %q", mode.name, m.keys.Help.Help().Desc)
			}
			m, _ = press(m, "?")
			help := helpText(m)
			for _, b := range allBindings(m) {
				if b.Enabled() && !listed(help, b) {
					t.Errorf("%s %dx%d: the Russian help does not list %q as %q:\n%s", mode.name, size[0], size[1], b.Keys(), b.Help().Desc, help)
				}
			}
		}
	}
}

// TestRussianHelpExplainsKeys: the explanations are found by the keys'
// Russian names.
func TestRussianHelpExplainsKeys(t *testing.T) {
	m := newFrameModel("ru", 160, 50, clocktesting.NewFakePassiveClock(t0), newFakeControls())
	m, _ = press(m, "?")
	help := m.View()
	for _, want := range []string{"создать: ещё один объект", "breaker: размыкатель вкл/выкл", "? все клавиши", "все клавиши: эта справка"} {
		if !strings.Contains(help, want) {
			t.Errorf("the Russian help lacks %q:\n%s", want, help)
		}
	}
}

// TestRussianStatusOfADroppedBurst: the count takes Russian's form.
func TestRussianStatusOfADroppedBurst(t *testing.T) {
	for n, want := range map[uint64]string{1: "1 событие потеряно", 3: "3 события потеряны", 12: "12 событий потеряно"} {
		m := New(Options{Header: Header{Lab: "4.4"}, Controls: newFakeControls(), Renderer: asciiRenderer(), Lang: "ru",
			Events: make(chan observe.Event), Dropped: func() uint64 { return n }})
		m = update(m, tea.WindowSizeMsg{Width: 160, Height: 40})
		if v := m.View(); !strings.Contains(v, want) {
			t.Errorf("%d dropped: no %q in\n%s", n, want, v)
		}
	}
}
