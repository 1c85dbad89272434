package tui

import (
	"reflect"
	"strings"
	"testing"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

func TestHelpListsTheLessonKeys(t *testing.T) {
	m := newLessonModel(120, 40, clocktesting.NewFakePassiveClock(t0), newFakeControls(), "4.4", "en")
	m, _ = press(m, "?")
	if !strings.Contains(m.View(), "lesson: the lab's text beside the operator") {
		t.Fatal("the overlay does not mention L")
	}
	m, _ = press(m, "?")
	m = pressSettled(t, m, "L")
	m, _ = press(m, "?")
	view := m.View()
	for _, want := range []string{"see this: run the section's demo", ">/.       next section", "</,       prev section",
		"↓/j       scroll down", "pgdn      page down", "esc       close: the lesson or the exercises"} {
		if !strings.Contains(view, want) {
			t.Errorf("the overlay lacks %q", want)
		}
	}
	if strings.Contains(view, "select: the previous object") {
		t.Error("the overlay offers ↑ for selecting while it scrolls the lesson")
	}
}

// TestNoTwoEnabledBindingsShareAKey in every mode: a key does one thing.
func TestNoTwoEnabledBindingsShareAKey(t *testing.T) {
	for _, mode := range []struct {
		name         string
		replay, open bool
		// exercises: a workspace is known; its layer is opened unless the lesson is.
		exercises bool
	}{{"live", false, false, false}, {"live+lesson", false, true, false}, {"replay", true, false, false},
		{"replay+lesson", true, true, false}, {"live+exercises", false, false, true}, {"live+lesson+workspace", false, true, true},
		{"replay+exercises", true, false, true}} {
		opts := Options{Header: Header{Lab: "4.4"}, Controls: newFakeControls(), Renderer: asciiRenderer(), Lang: "en"}
		if mode.replay {
			opts.Controls, opts.Trace = nil, lifecycleScript().Events()
		}
		if mode.exercises {
			opts.Exercises = lab31Exercises()
		}
		m := update(New(opts), tea.WindowSizeMsg{Width: 80, Height: 24})
		switch {
		case mode.open:
			m = pressSettled(t, m, "L")
		case mode.exercises:
			m, _ = press(m, "x")
		}
		owner := map[string]string{}
		for _, b := range allBindings(m) {
			if !b.Enabled() {
				continue
			}
			for _, k := range b.Keys() {
				if prev, dup := owner[k]; dup {
					t.Errorf("%s: key %q is bound to both %q and %q", mode.name, k, prev, b.Help().Desc)
				}
				owner[k] = b.Help().Desc
			}
		}
		if !mode.replay && mode.open && owner["w"] == "" {
			t.Errorf("%s: w is not bound", mode.name)
		}
		if (!mode.replay || mode.exercises) && owner["x"] == "" {
			t.Errorf("%s: x is not bound", mode.name)
		}
	}
}

// allBindings is every binding of the root and its components, found by
// reflection so that a binding added to any key map is checked too. The
// help's own (? and esc close it) is left out: while it is open it takes
// every key, so sharing ? with the key that opened it is the point. The
// detail's keys are in, but only enter is enabled while it is closed; open,
// it takes every key too.
func allBindings(m Model) []key.Binding {
	maps := []any{m.keys, m.dash.keys, m.live.keys, m.lesson.keys, m.exercises.keys, m.detail.keys}
	if m.replay != nil {
		maps = append(maps, m.replay.keys)
	}
	var out []key.Binding
	for _, km := range maps {
		v := reflect.ValueOf(km)
		for i := 0; i < v.NumField(); i++ {
			if b, ok := v.Field(i).Interface().(key.Binding); ok {
				out = append(out, b)
			}
		}
	}
	return out
}
