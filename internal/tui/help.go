package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/operator-lab/lab/internal/l10n"
	"github.com/operator-lab/lab/operator/switches"
)

// paneGuide explains each pane in one sentence for the ? overlay, under
// the pane's own title (the lesson's: "Lesson"); a pane that only some labs
// draw says which (shows), so the help never describes a pane that is not
// on screen.
var paneGuide = []struct {
	pane   pane
	lesson bool // the lesson below the panes, not pane
	text   string
	shows  func(c *common) bool
}{
	{pane: paneSequence, text: l10n.Mark("each reconcile across Watch → Queue → Reconcile → Client → API: the event that queued it, the dequeue, every client call (cache or API), the Result it returned and what the queue did with it.")},
	{pane: paneQueue, text: l10n.Mark("keys waiting for a worker, in progress, or delayed with a countdown; several adds for one key merge into one reconcile.")},
	{pane: paneObjects, text: l10n.Mark("each object on its state machine (current phase in [ ]), the time spent in each phase, its conditions."), shows: phasedLab},
	{pane: paneObjects, text: l10n.Mark("each object with its conditions and the last result of its reconcile."), shows: func(c *common) bool { return !phasedLab(c) }},
	{pane: paneBackoff, text: l10n.Mark("one bar per reconcile of the selected object: how long until the next try and who chose it (rate limiter, RequeueAfter, lesson backoff)."), shows: lessonBackoffLab},
	{pane: paneBackoff, text: l10n.Mark("one bar per reconcile of the selected object: how long until the next try and who chose it (rate limiter or RequeueAfter)."), shows: func(c *common) bool { return !lessonBackoffLab(c) }},
	{pane: panePatterns, text: l10n.Mark("the circuit breaker's state, the rate limiter's waits and the external system's recent calls."), shows: breakerLab},
	{pane: panePatterns, text: l10n.Mark("the external system's health and its recent calls."), shows: func(c *common) bool { return !breakerLab(c) }},
	{lesson: true, text: l10n.Mark("the lab's lesson, a section at a time; where a section has a demo, w shows it on the running operator.")},
}

// phasedLab, lessonBackoffLab and breakerLab say what the running lab's
// panes draw, as the panes decide it: phases only for objects that have
// them, the lesson's backoff and the breaker only where the lab has their
// switches. A replay, which has no switches, draws them all.
func phasedLab(c *common) bool { return (&objectsPane{c: c}).phased() }

func lessonBackoffLab(c *common) bool {
	return len(c.board) == 0 || c.hasSwitch(switches.NameBackoff)
}

func breakerLab(c *common) bool { return len(c.board) == 0 || c.hasSwitch(switches.NameBreaker) }

// helpLayer is the ? overlay: every key that applies, in titled groups,
// and what each pane shows. A component of the root, which opens it over
// a layer (under), gives it the key groups of what it covers (setGroups)
// and routes it every key while it is open (Update). It is laid out when
// its groups or its size change, so View only returns the drawing; when
// even its most compact arrangement is taller than the screen, it scrolls,
// so that no key that works goes unlisted.
type helpLayer struct {
	c      *common
	keys   helpKeys
	under  layer // what closing it shows again
	groups []helpGroup
	// panes are the dashboard's, which the pane guide names by their titles.
	panes [paneCount]paneComponent
	// explained is keyExplanations in the view's language.
	explained map[string]string

	width, height int
	body          []string // the key groups (and the pane guide), laid out
	guided        bool     // the body has the pane guide
	scrolls       bool     // the body is taller than its room
	offset        int      // the first body line shown
	drawn         string
}

// helpKeys close the overlay (? again, or esc) and scroll it when it is
// taller than the screen.
type helpKeys struct{ Close, Up, Down, PageUp, PageDown key.Binding }

func newHelpLayer(c *common, panes [paneCount]paneComponent) *helpLayer {
	say := c.say
	return &helpLayer{c: c, panes: panes, explained: explanations(say), keys: helpKeys{
		Close:    bind([]string{"?", "esc"}, "?/esc", say.Text("close help")),
		Up:       bind([]string{"up", "k"}, "↑/k", say.Text("scroll up")),
		Down:     bind([]string{"down", "j"}, "↓/j", say.Text("scroll down")),
		PageUp:   bind([]string{"pgup"}, "pgup", say.Text("page up")),
		PageDown: bind([]string{"pgdown", " "}, "pgdn", say.Text("page down")),
	}}
}

// SetSize gives the overlay the body's size.
func (h *helpLayer) SetSize(w, hh int) {
	h.width, h.height = w, hh
	h.layout()
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
	h.offset = 0
	h.layout()
}

// Update takes a key while the overlay is open; closed reports that it
// was one that closes it. Every other key is swallowed, so nothing acts
// behind the help; the arrows scroll it when it does not fit.
func (h *helpLayer) Update(msg tea.Msg) (closed bool) {
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		return false
	}
	room := h.bodyRoom()
	switch k := h.keys; {
	case key.Matches(km, k.Close):
		return true
	case key.Matches(km, k.Up):
		h.scroll(-1)
	case key.Matches(km, k.Down):
		h.scroll(1)
	case key.Matches(km, k.PageUp):
		h.scroll(-room)
	case key.Matches(km, k.PageDown):
		h.scroll(room)
	}
	return false
}

func (h *helpLayer) scroll(n int) {
	if !h.scrolls {
		return
	}
	h.offset = min(max(h.offset+n, 0), max(len(h.body)-h.bodyRoom(), 0))
	h.draw()
}

func (h *helpLayer) ShortHelp() []key.Binding  { return []key.Binding{h.keys.Close} }
func (h *helpLayer) FullHelp() [][]key.Binding { return [][]key.Binding{{h.keys.Close}} }

// View is the overlay as laid out last.
func (h *helpLayer) View() string { return h.drawn }

// bodyRoom is the rows for the key groups: the overlay's inside less a
// blank line and the closing line.
func (h *helpLayer) bodyRoom() int { return max(h.height-4, 1) }

// layout lays the key groups out in as many columns as fit, with their
// explanations if they fit and the pane guide if there is room; when
// nothing fits the height, the most compact arrangement scrolls.
func (h *helpLayer) layout() {
	st, say, w, groups := h.c.st, h.c.say, h.width, h.groups
	h.body, h.guided, h.scrolls = nil, false, false
	if len(groups) == 0 {
		h.drawn = ""
		return
	}
	column := func(i int, long bool) string {
		var b strings.Builder
		b.WriteString(st.PaneTitle.Render(groups[i].title))
		keyW := 9
		for _, kb := range groups[i].keys {
			if kb.Enabled() {
				keyW = max(keyW, ansi.StringWidth(keyLabel(kb)))
			}
		}
		for _, kb := range groups[i].keys {
			if kb.Enabled() {
				b.WriteString("\n" + h.entry(kb, keyW+1, long))
			}
		}
		return b.String()
	}
	var guide strings.Builder
	guide.WriteString(st.PaneTitle.Render(say.Text("What each pane shows")))
	for _, g := range paneGuide {
		if g.shows != nil && !g.shows(h.c) {
			continue
		}
		name := say.Text("Lesson")
		if !g.lesson {
			name = h.panes[g.pane].Title()
		}
		guide.WriteString("\n" + st.Layout.Width(max(w-8, 10)).Render(st.Bold.Render(name)+": "+say.Text(g.text)))
	}
	guideH := lipgloss.Height(guide.String()) + 1

	// Arrangements of the key groups that fit the width, in as many
	// columns as possible: with the explanations, then the names alone.
	type arrangement struct {
		text string
		long bool
	}
	var candidates []arrangement
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
				candidates = append(candidates, arrangement{strings.Join(rows, "\n\n"), long})
			}
		}
	}
	if len(candidates) == 0 { // narrower than any column: one after another
		var cols []string
		for i := range groups {
			cols = append(cols, column(i, false))
		}
		candidates = []arrangement{{text: strings.Join(cols, "\n\n")}}
	}
	// The explanations matter more than the pane guide: with them, the
	// guide if it fits too; then without them.
	room := h.bodyRoom()
	var body string
	for _, long := range []bool{true, false} {
		for _, withGuide := range []bool{true, false} {
			for _, c := range candidates {
				extra := 0
				if withGuide {
					extra = guideH
				}
				if c.long == long && body == "" && lipgloss.Height(c.text)+extra <= room {
					body, h.guided = c.text, withGuide
					if withGuide {
						body += "\n\n" + guide.String()
					}
				}
			}
		}
	}
	if body == "" { // none fits: the shortest scrolls
		body = candidates[0].text
		for _, c := range candidates {
			if lipgloss.Height(c.text) < lipgloss.Height(body) {
				body = c.text
			}
		}
		h.scrolls = true
	}
	h.body = strings.Split(body, "\n")
	h.offset = min(h.offset, max(len(h.body)-room, 0))
	h.draw()
}

// draw puts the lines in view in the overlay's frame, with the closing line.
func (h *helpLayer) draw() {
	st, say, w, hh := h.c.st, h.c.say, h.width, h.height
	room := h.bodyRoom()
	lines := h.body
	closing := say.Text("? or esc closes this help · q quits")
	switch {
	case !h.guided && !h.scrolls:
		closing += say.Text(" · a taller terminal explains each pane")
	case h.scrolls:
		end := min(h.offset+room, len(lines))
		lines = lines[h.offset:end]
		closing = say.Textf("↑/↓ scroll · lines %d–%d of %d · ? or esc closes", h.offset+1, end, len(h.body))
	}
	content := strings.Join(lines, "\n") + "\n\n" + st.Faint.Render(closing)
	box := st.Overlay.Width(w - 4).Render(content)
	h.drawn = lipgloss.Place(w, hh, lipgloss.Center, lipgloss.Top, box)
}

// entry is one key of the overlay: its keys in a column keyW wide, its
// name, and with long its explanation.
func (h *helpLayer) entry(kb key.Binding, keyW int, long bool) string {
	st, help := h.c.st, kb.Help()
	text := help.Desc
	if more := h.explained[help.Key+" "+help.Desc]; long && more != "" {
		text += ": " + more
	}
	return st.Help.FullKey.Render(padRight(keyLabel(kb), keyW)) + st.Help.FullDesc.Render(text)
}

func padRight(s string, n int) string {
	if w := lipgloss.Width(s); w < n {
		return s + strings.Repeat(" ", n-w)
	}
	return s
}
