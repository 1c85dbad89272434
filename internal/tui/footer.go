package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/operator-lab/lab/observe"
)

// viewFooter: a status line (what just happened, or where the replay is) and the key help.
func (m Model) viewFooter() string {
	st, c := m.c.st, m.c
	var line string
	switch {
	case c.status.text != "" && c.clock().Sub(c.status.at) < statusFor:
		style := st.Info
		if c.status.bad {
			style = st.Bad
		}
		line = " " + style.Render(c.status.text)
	case m.replay != nil:
		line = " " + m.replay.View()
	default:
		line = " " + m.liveSummary()
	}
	return clip(line, m.width) + "\n " + m.fitHelp(m.width-1)
}

// fitHelp fits the most useful keys into one line: it drops keys from
// the end of the list but always keeps "? all keys" and "q quit". The
// widths are added up once, so the line is drawn once.
func (m Model) fitHelp(w int) string {
	var items []key.Binding
	width := 0
	sep := ansi.StringWidth(m.footer.ShortSeparator)
	for _, b := range m.shortHelp() {
		if b.Enabled() {
			items = append(items, b)
			width += entryWidth(b) + sep
		}
	}
	width -= sep
	essential := func(b key.Binding) bool { return b.Help().Key == "?" || b.Help().Key == "q" }
	for i := len(items) - 1; i >= 0 && width > w; i-- {
		if !essential(items[i]) {
			width -= entryWidth(items[i]) + sep
			items = append(items[:i], items[i+1:]...)
		}
	}
	return clip(m.footer.ShortHelpView(items), w)
}

// entryWidth is the cells a key takes in the footer: "key desc".
func entryWidth(b key.Binding) int {
	return ansi.StringWidth(b.Help().Key) + 1 + ansi.StringWidth(b.Help().Desc)
}

func (m Model) liveSummary() string {
	st, say := m.c.st, m.c.say
	t := m.c.state.Totals()
	parts := []string{
		say.Count(int(t.Events), "%d events", "%d events"),
		say.Count(int(t.Reconciles), "%d reconciles", "%d reconciles"),
	}
	if m.dropped != nil {
		if d := m.dropped(); d > 0 {
			dropped := say.Count(int(d), "%d events dropped (a burst overflowed the view's buffer)", "%d events dropped (a burst overflowed the view's buffer)")
			parts = append(parts, st.Warn.Render(dropped))
		}
	}
	if e := m.c.state.Scenario(); e.Kind != "" {
		// The last step a scenario (or a key you pressed) took.
		step := strings.TrimSpace(e.Op + " " + m.c.displayKey(e.Key))
		if e.Message != "" {
			step += " (" + e.Message + ")"
		}
		who := say.Text("scenario")
		if e.Name == "you" {
			who = say.Text("you")
		}
		parts = append(parts, who+": "+step)
	}
	return st.Faint.Render(strings.Join(parts, " · "))
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
