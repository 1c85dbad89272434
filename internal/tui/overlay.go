package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
)

// paneGuide explains each pane in one sentence for the ? overlay.
var paneGuide = []struct{ pane, text string }{
	{"Reconcile sequence", "each reconcile across Watch → Queue → Reconcile → Client → API: the event that queued it, the dequeue, every client call (cache or API), the Result it returned and what the queue did with it."},
	{"Work queue", "keys waiting for a worker, in progress, or delayed with a countdown; several adds for one key merge into one reconcile."},
	{"Objects & phases", "each object on its state machine (current phase in [ ]), the time spent in each phase, its conditions."},
	{"Retry delays", "one bar per reconcile of the selected object: how long until the next try and who chose it (rate limiter, RequeueAfter, lesson backoff)."},
	{"Breaker · limiter · external", "the circuit breaker's state, the rate limiter's waits and the external system's recent calls."},
	{"Lesson", "the lab's lesson, a section at a time; where a section has a demo, w shows it on the running operator."},
}

// viewHelpOverlay lists every key by group and what each pane shows.
func (m Model) viewHelpOverlay(w, h int) string {
	st := m.st
	titles := []string{"Switches", "Objects & step-through", "View", "Lesson"}
	if m.replay != nil {
		titles = []string{"Replay", "View", "Lesson"}
	}
	if m.exercises.known() {
		titles[len(titles)-1] = "Lesson & exercises" // see FullHelp
	}
	groups := helpView{k: m.keys, replay: m.replay != nil, exercises: m.exercises.known()}.FullHelp()
	// A group with no key that applies (no lesson for this lab) is left out.
	for i := len(groups) - 1; i >= 0; i-- {
		if !anyEnabled(groups[i]) {
			groups = append(groups[:i], groups[i+1:]...)
			titles = append(titles[:i], titles[i+1:]...)
		}
	}
	column := func(i int, long bool) string {
		var b strings.Builder
		b.WriteString(st.PaneTitle.Render(titles[i]))
		for _, kb := range groups[i] {
			if kb.Enabled() {
				b.WriteString("\n" + helpEntry(st, kb, long))
			}
		}
		return b.String()
	}
	var guide strings.Builder
	guide.WriteString(st.PaneTitle.Render("What each pane shows"))
	for _, g := range paneGuide {
		guide.WriteString("\n" + st.Layout.Width(max(w-8, 10)).Render(st.Bold.Render(g.pane)+": "+g.text))
	}
	guideH := lipgloss.Height(guide.String()) + 2

	// Arrangements of the key groups that fit the width: long descriptions
	// in as many columns as possible first, then short ones.
	var candidates []string
	for _, long := range []bool{true, false} {
		for perRow := len(groups); perRow >= 1; perRow-- {
			var rows []string
			fits := true
			for start := 0; start < len(groups); start += perRow {
				var cols []string
				for i := start; i < min(start+perRow, len(groups)); i++ {
					cols = append(cols, st.Layout.PaddingRight(3).Render(column(i, long)))
				}
				row := lipgloss.JoinHorizontal(lipgloss.Top, cols...)
				fits = fits && lipgloss.Width(row) <= w-6
				rows = append(rows, row)
			}
			if fits {
				candidates = append(candidates, strings.Join(rows, "\n\n"))
			}
		}
	}
	room := h - 4 // frame and the closing line
	keysBlock, withGuide := column(0, false), false
	for _, c := range candidates { // prefer room for the pane guide
		if lipgloss.Height(c)+guideH <= room {
			keysBlock, withGuide = c, true
			break
		}
	}
	if !withGuide {
		for _, c := range candidates {
			if lipgloss.Height(c) <= room {
				keysBlock = c
				break
			}
		}
	}
	closing := st.Faint.Render("? or esc closes this help · q quits")
	content := keysBlock + "\n\n" + closing
	if withGuide {
		content = keysBlock + "\n\n" + guide.String() + "\n\n" + closing
	} else {
		closing += st.Faint.Render(" · a taller terminal explains each pane")
		content = keysBlock + "\n\n" + closing
	}
	lines := strings.Split(content, "\n")
	if len(lines) > h-2 {
		lines = lines[:max(h-2, 1)]
	}
	box := st.Overlay.Width(w - 4).Render(strings.Join(lines, "\n"))
	return lipgloss.Place(w, h, lipgloss.Center, lipgloss.Top, box)
}

func helpEntry(st Styles, kb key.Binding, long bool) string {
	h := kb.Help()
	desc := h.Desc
	if long {
		desc = firstNonEmpty(longHelp[h.Key+" "+h.Desc], longHelp[h.Key], desc)
	}
	return st.Help.FullKey.Render(padRight(h.Key, 10)) + st.Help.FullDesc.Render(desc)
}

func anyEnabled(bindings []key.Binding) bool {
	for _, b := range bindings {
		if b.Enabled() {
			return true
		}
	}
	return false
}

func padRight(s string, n int) string {
	if w := lipgloss.Width(s); w < n {
		return s + strings.Repeat(" ", n-w)
	}
	return s
}
