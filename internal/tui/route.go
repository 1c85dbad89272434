package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// layer is what is open over the dashboard. The root keeps one, and
// routes keys by it.
type layer int

const (
	layerNone      layer = iota
	layerLesson          // below what stays of the dashboard
	layerExercises       // in the lesson's place
	layerHelp            // over everything, until closed
	layerDetail          // one reconcile in full, over the body
)

// shown is the layer the dashboard makes room for: the open one, or the
// one the help or the detail covers (the help may cover the detail).
func (m Model) shown() layer {
	l := m.layer
	if l == layerHelp {
		l = m.help.under
	}
	if l == layerDetail {
		l = m.detail.under
	}
	return l
}

// detailOpen reports whether the reconcile detail is open, perhaps under
// the help.
func (m Model) detailOpen() bool {
	return m.layer == layerDetail || m.layer == layerHelp && m.help.under == layerDetail
}

// open shows a layer (layerNone closes the one open): the dashboard makes
// room for the lesson or the exercises, and every key map follows. Opening
// the lesson returns the render of what it is missing.
func (m *Model) open(l layer) tea.Cmd {
	if l == layerHelp {
		m.help.under = m.layer
	}
	m.layer = l
	switch m.shown() {
	case layerLesson:
		m.dash.setLayer(m.lesson)
	case layerExercises:
		m.dash.setLayer(m.exercises)
	default:
		m.dash.setLayer(nil)
	}
	m.configure()
	if l != layerLesson {
		return nil
	}
	return m.syncLesson()
}

// onKey routes a key by the open layer: the help takes every key, and so
// does the reconcile detail (but for ?, which opens the help over it); the
// lesson its own and the ones that close it or run its demo; then the keys
// that open layers, then the dashboard's, then the replay's or the running
// lab's. No two enabled bindings share a key, so the order only decides
// who is asked first.
func (m Model) onKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	if key.Matches(msg, m.keys.Quit) {
		return m, tea.Quit
	}
	if m.screen == screenStartup {
		return m, nil
	}
	switch m.layer {
	case layerHelp:
		if m.help.Update(msg) {
			return m, m.open(m.help.under)
		}
		return m, nil
	case layerDetail:
		switch {
		case key.Matches(msg, m.keys.Help):
			return m, m.open(layerHelp)
		case m.detail.Update(msg):
			return m, m.open(m.detail.under)
		}
		return m, nil
	case layerLesson:
		switch {
		case key.Matches(msg, m.lesson.keys.Toggle, m.keys.CloseLayer):
			return m, m.open(layerNone)
		case key.Matches(msg, m.lesson.keys.Demo):
			section, _ := m.lesson.current()
			return m, m.live.runDemo(section, m.header.Lab)
		}
		if cmd, handled := m.lesson.Update(msg); handled {
			return m, cmd
		}
	case layerExercises:
		if key.Matches(msg, m.keys.CloseLayer) {
			return m, m.open(layerNone)
		}
	}
	switch {
	case key.Matches(msg, m.keys.Help):
		return m, m.open(layerHelp)
	case key.Matches(msg, m.lesson.keys.Toggle):
		return m, m.open(layerLesson)
	case key.Matches(msg, m.exercises.keys.Toggle):
		return m, m.toggleExercises()
	case key.Matches(msg, m.detail.keys.Open):
		return m, m.openDetail()
	}
	if _, handled := m.dash.Update(msg); handled {
		return m, nil
	}
	if m.replay != nil {
		cmd, _ := m.replay.Update(msg)
		return m, cmd
	}
	cmd, _ := m.live.Update(msg)
	return m, cmd
}

// toggleExercises opens or closes the exercises; they share the lesson's
// place, so opening them closes it.
func (m *Model) toggleExercises() tea.Cmd {
	switch {
	case !m.exercises.known():
		m.c.setStatus(m.exercises.noWorkspace(), false)
		return nil
	case m.layer == layerExercises:
		return m.open(layerNone)
	}
	return m.open(layerExercises)
}

// openDetail opens the reconcile the sequence pane points at in full, over
// the body; closing it shows again what it covers.
func (m *Model) openDetail() tea.Cmd {
	if !m.detail.show() {
		m.c.setStatus(m.detail.noReconcile(), false)
		return nil
	}
	m.detail.under = m.shown()
	return m.open(layerDetail)
}

// refreshDetail has the open detail follow what the events changed.
func (m *Model) refreshDetail() {
	if m.detailOpen() {
		m.detail.refresh()
	}
}

// setExercises takes in the workspace's progress and says on the status
// line what changed.
func (m *Model) setExercises(msg ExercisesMsg) {
	if news, bad := m.exercises.set(msg); len(news) > 0 {
		m.c.setStatus(strings.Join(news, " · "), bad)
	}
	m.configure()
}

// syncLesson shows the lesson, when it is on screen, at its size; it
// returns the render of what the pane is missing.
func (m *Model) syncLesson() tea.Cmd {
	if m.shown() != layerLesson {
		return nil
	}
	return m.lesson.refresh()
}
