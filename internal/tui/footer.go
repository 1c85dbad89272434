package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/operator-lab/lab/observe"
)

// viewFooter: a status line (what just happened, or where the replay is) and the key help.
func (m Model) viewFooter() string {
	st := m.st
	var line string
	switch {
	case m.status.text != "" && m.clock().Sub(m.status.at) < statusFor:
		style := st.Info
		if m.status.bad {
			style = st.Bad
		}
		line = " " + style.Render(m.status.text)
	case m.replay != nil:
		line = " " + m.replayPosition()
	default:
		line = " " + m.liveSummary()
	}
	return clip(line, m.width) + "\n " + m.shortHelp(m.width-1)
}

// shortHelp fits the most useful keys into one line: it drops keys from
// the end of the list but always keeps "? all keys" and "q quit".
func (m Model) shortHelp(w int) string {
	h := m.help
	h.ShortSeparator = "  "
	view := helpView{k: m.keys, replay: m.replay != nil, reading: m.lessonOpen, exercises: m.exercises.known()}
	var items []key.Binding
	for _, b := range view.ShortHelp() {
		if b.Enabled() {
			items = append(items, b)
		}
	}
	essential := func(b key.Binding) bool { return b.Help().Key == "?" || b.Help().Key == "q" }
	for {
		line := h.ShortHelpView(items)
		if ansi.StringWidth(line) <= w || len(items) <= 2 {
			return clip(line, w)
		}
		for i := len(items) - 1; i >= 0; i-- {
			if !essential(items[i]) {
				items = append(items[:i], items[i+1:]...)
				break
			}
		}
	}
}

func (m Model) liveSummary() string {
	st := m.st
	t := m.state.Totals()
	parts := []string{
		fmt.Sprintf("%d events", t.Events),
		fmt.Sprintf("%d reconciles", t.Reconciles),
	}
	if m.dropped != nil {
		if d := m.dropped(); d > 0 {
			parts = append(parts, st.Warn.Render(fmt.Sprintf("%d events dropped (a burst overflowed the view's buffer)", d)))
		}
	}
	if e := m.state.Scenario(); e.Kind != "" {
		// The last step a scenario (or a key you pressed) took.
		step := strings.TrimSpace(e.Op + " " + m.displayKey(e.Key))
		if e.Message != "" {
			step += " (" + e.Message + ")"
		}
		who := "scenario"
		if e.Name == "you" {
			who = "you"
		}
		parts = append(parts, who+": "+step)
	}
	return st.Faint.Render(strings.Join(parts, " · "))
}

func (m Model) replayPosition() string {
	st := m.st
	r := m.replay
	if len(r.trace) == 0 {
		return st.Warn.Render("the trace is empty")
	}
	e, ok := r.current()
	if !ok {
		return st.Faint.Render(fmt.Sprintf("start of trace (%d events) — → steps one event, ] one reconcile, space plays", len(r.trace)))
	}
	return st.Faint.Render(fmt.Sprintf("event %d/%d  %s  ", r.cursor, len(r.trace), e.Time.Format("15:04:05.000"))) + describeEvent(st, e)
}

// describeEvent is a one-line description of any event (replay's status
// line): its kind and key, then the trace's wording of it without the
// bookkeeping (observe.Event.Fields, Brief), a reconcile's result in its colour.
func describeEvent(st Styles, e observe.Event) string {
	text := string(e.Kind)
	if e.Key != "" {
		text += " " + e.Key
	}
	if d := e.Fields().Brief().String(); d != "" {
		text += " " + d
	}
	if e.Kind == observe.KindReconcileEnd {
		return st.Result(e.Result).Render(text)
	}
	return text
}
