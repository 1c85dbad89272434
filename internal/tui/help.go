package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
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

// helpLayer is the ? overlay: every key that applies, in titled groups,
// and what each pane shows. A component of the root, which opens it over
// a layer (under), gives it the key groups of what it covers (setGroups)
// and routes it every key while it is open (Update). It is laid out when
// its groups or its size change, so View only returns the drawing.
type helpLayer struct {
	c      *common
	keys   helpKeys
	under  layer // what closing it shows again
	groups []helpGroup

	width, height int
	drawn         string
}

// helpKeys close the overlay: ? again, or esc.
type helpKeys struct{ Close key.Binding }

func newHelpLayer(c *common) *helpLayer {
	return &helpLayer{c: c, keys: helpKeys{Close: bind([]string{"?", "esc"}, "?/esc", "close help")}}
}

// SetSize gives the overlay the body's size.
func (h *helpLayer) SetSize(w, hh int) {
	h.width, h.height = w, hh
	h.draw()
}

// setGroups shows these key groups; a group with no key that applies
// (no lesson for this lab) is left out.
func (h *helpLayer) setGroups(groups []helpGroup) {
	h.groups = h.groups[:0]
	for _, g := range groups {
		if anyEnabled(g.keys) {
			h.groups = append(h.groups, g)
		}
	}
	h.draw()
}

// Update takes a key while the overlay is open; closed reports that it
// was one that closes it. Every other key is swallowed, so nothing acts
// behind the help.
func (h *helpLayer) Update(msg tea.Msg) (closed bool) {
	km, ok := msg.(tea.KeyMsg)
	return ok && key.Matches(km, h.keys.Close)
}

func (h *helpLayer) ShortHelp() []key.Binding  { return []key.Binding{h.keys.Close} }
func (h *helpLayer) FullHelp() [][]key.Binding { return [][]key.Binding{{h.keys.Close}} }

// View is the overlay as laid out last.
func (h *helpLayer) View() string { return h.drawn }

// draw lays the key groups out in as many columns as fit, with their
// long descriptions if they fit and the pane guide if there is room.
func (h *helpLayer) draw() {
	st, w, hh, groups := h.c.st, h.width, h.height, h.groups
	if len(groups) == 0 {
		h.drawn = ""
		return
	}
	column := func(i int, long bool) string {
		var b strings.Builder
		b.WriteString(st.PaneTitle.Render(groups[i].title))
		for _, kb := range groups[i].keys {
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
	room := hh - 4 // frame and the closing line
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
	if len(lines) > hh-2 {
		lines = lines[:max(hh-2, 1)]
	}
	box := st.Overlay.Width(w - 4).Render(strings.Join(lines, "\n"))
	h.drawn = lipgloss.Place(w, hh, lipgloss.Center, lipgloss.Top, box)
}

func helpEntry(st Styles, kb key.Binding, long bool) string {
	h := kb.Help()
	desc := h.Desc
	if long {
		desc = firstNonEmpty(longHelp[h.Key+" "+h.Desc], longHelp[h.Key], desc)
	}
	return st.Help.FullKey.Render(padRight(h.Key, 10)) + st.Help.FullDesc.Render(desc)
}

func padRight(s string, n int) string {
	if w := lipgloss.Width(s); w < n {
		return s + strings.Repeat(" ", n-w)
	}
	return s
}
