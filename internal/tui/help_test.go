package tui

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// helpModes are the screens the ? overlay is opened over.
var helpModes = []struct {
	name                      string
	replay, lesson, workspace bool
}{
	{"live", false, false, false},
	{"live+lesson", false, true, false},
	{"live+exercises", false, false, true},
	{"replay", true, false, false},
	{"replay+lesson", true, true, false},
}

// helpModel is lab 4.4 in a mode at a size, its lesson or exercises open.
func helpModel(t *testing.T, replay, lesson, workspace bool, w, h int) Model {
	t.Helper()
	return helpModelIn(t, "en", replay, lesson, workspace, w, h)
}

// helpModelIn is helpModel in a language.
func helpModelIn(t *testing.T, lang string, replay, lesson, workspace bool, w, h int) Model {
	t.Helper()
	opts := Options{Header: Header{Lab: "4.4"}, Controls: newFakeControls(), Renderer: asciiRenderer(), Lang: lang,
		Now: clocktesting.NewFakePassiveClock(t0).Now}
	if replay {
		opts.Controls, opts.Trace = nil, lifecycleScript().Events()
	}
	if workspace {
		opts.Exercises = lab31Exercises()
	}
	m := update(New(opts), tea.WindowSizeMsg{Width: w, Height: h})
	switch {
	case lesson:
		m = pressSettled(t, m, "L")
	case workspace:
		m, _ = press(m, "x")
	}
	return m
}

// helpText is everything the open overlay shows, scrolled through to its
// end as a learner would.
func helpText(m Model) string {
	views := []string{m.View()}
	for i := 0; i < 40; i++ {
		m, _ = press(m, "pgdown")
		m = update(m, tea.KeyMsg{Type: tea.KeyPgDown})
		if v := m.View(); v != views[len(views)-1] {
			views = append(views, v)
			continue
		}
		break
	}
	return strings.Join(views, "\n")
}

// helpKeyName is how the overlay writes a key bubbletea names k.
func helpKeyName(k string) string {
	if name, ok := map[string]string{" ": "space", "up": "↑", "down": "↓", "left": "←", "right": "→", "pgdown": "pgdn"}[k]; ok {
		return name
	}
	return k
}

// listed reports whether help has an entry for b: a key column naming
// every key b answers to, then b's name.
func listed(help string, b key.Binding) bool {
	entry := regexp.MustCompile(`(?:^|[\s│])(\S+) +` + regexp.QuoteMeta(b.Help().Desc) + `(?::|\s|│|$)`)
	for _, m := range entry.FindAllStringSubmatch(help, -1) {
		parts := strings.Split(m[1], "/")
		if !slices.ContainsFunc(b.Keys(), func(k string) bool { return !slices.Contains(parts, helpKeyName(k)) }) {
			return true
		}
	}
	return false
}

// TestHelpListsEveryKeyThatWorks: in every screen and at every size the ?
// overlay lists every key that does something there — every key a
// binding answers to, under the name the footer gives it — scrolling when
// it is taller than the terminal.
func TestHelpListsEveryKeyThatWorks(t *testing.T) {
	for _, mode := range helpModes {
		for _, size := range [][2]int{{80, 24}, {100, 30}, {120, 40}, {160, 50}} {
			m := helpModel(t, mode.replay, mode.lesson, mode.workspace, size[0], size[1])
			var works []key.Binding
			for _, b := range allBindings(m) {
				if b.Enabled() {
					works = append(works, b)
				}
			}
			m, _ = press(m, "?")
			help := helpText(m)
			for _, b := range works {
				if !listed(help, b) {
					t.Errorf("%s %dx%d: the help does not list %q (%s) as %q:\n%s", mode.name, size[0], size[1],
						b.Keys(), b.Help().Key, b.Help().Desc, help)
				}
			}
		}
	}
}

// TestOneNamePerKeyAtEveryWidth: a switch's key is named as the switch
// is, and the header names every switch so, whatever the width.
func TestOneNamePerKeyAtEveryWidth(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {100, 30}, {120, 40}, {160, 50}} {
		m := newLiveModel(size[0], size[1], clocktesting.NewFakePassiveClock(t0), newFakeControls())
		m = fold(m, lifecycleScript().Events())
		view := m.View()
		header := strings.Join(strings.SplitN(view, "\n", 3)[:2], "\n")
		for _, s := range newFakeControls().Switches() {
			if !strings.Contains(header, " "+s.Name+"=") {
				t.Errorf("%dx%d: the header does not name switch %s:\n%s", size[0], size[1], s.Name, header)
			}
		}
		for _, sk := range m.live.keys.switchKeys() {
			if sk.dir > 0 && sk.wrap && sk.b.Help().Desc != sk.name {
				t.Errorf("key %s moves switch %s but is named %q", sk.b.Help().Key, sk.name, sk.b.Help().Desc)
			}
		}
		m, _ = press(m, "?")
		help := helpText(m)
		for _, sk := range m.live.keys.switchKeys() {
			if !listed(help, sk.b) {
				t.Errorf("%dx%d: the help names key %s otherwise than %q", size[0], size[1], sk.b.Help().Key, sk.b.Help().Desc)
			}
		}
	}
}

// TestHelpOverTheDetailListsItsKeys: over the reconcile detail, which
// takes every key, the help lists the detail's keys — those that work there.
func TestHelpOverTheDetailListsItsKeys(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		m := newLiveModel(size[0], size[1], clocktesting.NewFakePassiveClock(t0), newFakeControls())
		m = enter(fold(m, lifecycleScript().Events()))
		k := m.detail.keys
		works := []key.Binding{k.Close, k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom, m.keys.Help, m.keys.Quit}
		m, _ = press(m, "?")
		help := helpText(m)
		for _, b := range works {
			if !b.Enabled() || !listed(help, b) {
				t.Errorf("%dx%d: over the detail the help does not list %q as %q:\n%s", size[0], size[1], b.Keys(), b.Help().Desc, help)
			}
		}
		if listed(help, m.live.keys.Create) {
			t.Errorf("%dx%d: the help over the detail lists c, which does nothing there", size[0], size[1])
		}
	}
}

// TestEveryKeyExplanationHasItsKey: an explanation is looked up by key and
// name, so one whose key was renamed would silently never show.
func TestEveryKeyExplanationHasItsKey(t *testing.T) {
	named := map[string]bool{}
	for _, mode := range helpModes {
		m := helpModel(t, mode.replay, mode.lesson, mode.workspace, 120, 40)
		for _, b := range append(allBindings(m), m.detail.FullHelp()[0]...) {
			named[b.Help().Key+" "+b.Help().Desc] = true
		}
	}
	for _, e := range keyExplanations {
		if k := e.key + " " + e.name; !named[k] {
			t.Errorf("no key is named %q: its explanation is never shown", k)
		}
	}
}
