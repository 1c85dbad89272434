package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// The smallest terminal the dashboard draws in; below it a message says so.
const (
	minWidth  = 60
	minHeight = 16
)

type pane int

const (
	paneSequence pane = iota
	paneQueue
	paneObjects
	paneBackoff
	panePatterns
	paneLesson
	paneExercises
)

var paneTitles = map[pane]string{
	paneSequence: "Reconcile sequence",
	paneQueue:    "Work queue",
	paneObjects:  "Objects & phases",
	paneBackoff:  "Retry delays",
	panePatterns: "Breaker · limiter · external",
}

// paneHints say in a few words what a pane shows; drawn in the title when it fits.
var paneHints = map[pane]string{
	paneSequence: "why each reconcile ran, what it did, what the queue did next",
	paneQueue:    "keys waiting for a worker",
	paneObjects:  "state machine, current phase in [ ]",
	paneBackoff:  "when each retry came, and who chose the delay",
	panePatterns: "protecting the external system",
}

// layoutKind is how the panes are arranged for the terminal size.
type layoutKind int

const (
	layoutTooSmall layoutKind = iota
	layoutCompact             // one pane at a time, tabs
	layoutMedium              // sequence on top; queue + a tabbed pane below
	layoutFull                // every pane at once
)

// setSize takes a new terminal size: it chooses the layout and gives each
// component its size, once, so that View only draws.
func (m *Model) setSize(w, h int) {
	m.width, m.height = w, h
	m.kind = layoutFor(w, h)
	m.startup.SetSize(w, h)
	// The layers (lesson, exercises) share the frame below what stays of
	// the dashboard; they are sized for it even while closed, which costs
	// nothing: the lesson renders only when open.
	bodyH := m.bodyHeight()
	innerW, innerH := max(w-2, 1), max(bodyH-m.layerSplit(bodyH)-2, 0)
	m.lesson.SetSize(innerW, innerH)
	m.exercises.SetSize(innerW, innerH)
}

// layout is the arrangement setSize chose.
func (m Model) layout() layoutKind { return m.kind }

func layoutFor(width, height int) layoutKind {
	switch {
	case width < minWidth || height < minHeight:
		return layoutTooSmall
	case width >= 120 && height >= 34:
		return layoutFull
	case width >= 80 && height >= 22:
		return layoutMedium
	}
	return layoutCompact
}

// tabGroup is the panes that share one slot in the current layout. None
// do while a layer (lesson, exercises) is open: it takes the slot they share.
func (m Model) tabGroup() []pane {
	if _, open := m.layer(); open {
		return nil
	}
	switch m.layout() {
	case layoutCompact:
		return []pane{paneSequence, paneQueue, paneObjects, paneBackoff, panePatterns}
	case layoutMedium:
		return []pane{paneObjects, paneBackoff, panePatterns}
	}
	return nil
}

func (m Model) activeTab() pane {
	group := m.tabGroup()
	if len(group) == 0 {
		return paneSequence
	}
	i := ((m.tab % len(group)) + len(group)) % len(group)
	return group[i]
}

// View renders the screen.
func (m Model) View() string {
	if m.layout() == layoutTooSmall {
		return m.viewTooSmall()
	}
	if m.screen == screenStartup {
		return m.startup.View()
	}
	header := m.viewHeader()
	footer := m.viewFooter()
	bodyH := m.bodyHeight()
	var body string
	if m.showHelp {
		body = m.viewHelpOverlay(m.width, bodyH)
	} else {
		body = m.viewBody(m.width, bodyH)
	}
	return header + "\n" + body + "\n" + footer
}

func (m Model) viewTooSmall() string {
	msg := fmt.Sprintf("Terminal too small: %d×%d.\nlab needs at least %d×%d;\n80×24 or larger is best.\nEnlarge the window,\nor press q to quit.",
		m.width, m.height, minWidth, minHeight)
	lines := strings.Split(msg, "\n")
	for i := range lines {
		lines[i] = clip(lines[i], m.width)
	}
	for i := range lines {
		lines[i] = m.st.Warn.Render(lines[i])
	}
	return strings.Join(lines, "\n")
}

// layer is the pane open over the lower part of the dashboard, if any:
// the lesson or the exercises, which share that place.
func (m Model) layer() (pane, bool) {
	switch {
	case m.lessonOpen:
		return paneLesson, true
	case m.exercisesOpen:
		return paneExercises, true
	}
	return 0, false
}

// layerSplit is how many rows of the body stay above an open layer, which
// takes the rest: the top row of panes in the full layout, the sequence in
// the medium one, nothing in the compact one.
func (m Model) layerSplit(h int) int {
	switch m.layout() {
	case layoutFull:
		return h / 2
	case layoutMedium:
		return h * 2 / 5
	}
	return 0
}

// bodyHeight is the rows between the two header and two footer lines.
func (m Model) bodyHeight() int { return m.height - 4 }

func (m Model) viewBody(w, h int) string {
	if layer, open := m.layer(); open {
		return m.viewBodyWithLayer(layer, w, h)
	}
	switch m.layout() {
	case layoutFull:
		topH := h * 3 / 5
		seqW := w * 13 / 20
		queueH := topH / 2
		right := m.framePane(paneQueue, nil, w-seqW, queueH) + "\n" + m.framePane(panePatterns, nil, w-seqW, topH-queueH)
		top := lipgloss.JoinHorizontal(lipgloss.Top, m.framePane(paneSequence, nil, seqW, topH), right)
		bottomH := h - topH
		half := w / 2
		bottom := lipgloss.JoinHorizontal(lipgloss.Top,
			m.framePane(paneObjects, nil, half, bottomH),
			m.framePane(paneBackoff, nil, w-half, bottomH))
		return top + "\n" + bottom
	case layoutMedium:
		topH := h * 11 / 20
		queueW := w * 2 / 5
		bottomH := h - topH
		top := m.framePane(paneSequence, nil, w, topH)
		bottom := lipgloss.JoinHorizontal(lipgloss.Top,
			m.framePane(paneQueue, nil, queueW, bottomH),
			m.framePane(m.activeTab(), m.tabGroup(), w-queueW, bottomH))
		return top + "\n" + bottom
	}
	return m.framePane(m.activeTab(), m.tabGroup(), w, h)
}

// viewBodyWithLayer puts a layer (the lesson, the exercises) below what
// stays of the dashboard: the reconcile sequence (with the queue and the
// patterns pane when there is room), so the operator stays in view.
func (m Model) viewBodyWithLayer(layer pane, w, h int) string {
	topH := m.layerSplit(h)
	below := m.framePane(layer, nil, w, h-topH)
	switch m.layout() {
	case layoutFull:
		seqW := w * 13 / 20
		queueH := topH / 2
		right := m.framePane(paneQueue, nil, w-seqW, queueH) + "\n" + m.framePane(panePatterns, nil, w-seqW, topH-queueH)
		top := lipgloss.JoinHorizontal(lipgloss.Top, m.framePane(paneSequence, nil, seqW, topH), right)
		return top + "\n" + below
	case layoutMedium:
		return m.framePane(paneSequence, nil, w, topH) + "\n" + below
	}
	return below
}

// framePane draws a pane in a rounded frame with its title (or, for a tab
// group, every tab's title with the active one marked) in the top border.
func (m Model) framePane(p pane, tabs []pane, w, h int) string {
	innerW, innerH := max(w-2, 1), max(h-2, 0)
	lines := m.paneLines(p, innerW, innerH)
	border := m.st.Border
	if len(tabs) > 0 || p == paneLesson || p == paneExercises {
		border = m.st.BorderFocus
	}
	var title string
	if len(tabs) > 0 {
		var parts []string
		for _, t := range tabs {
			if t == p {
				parts = append(parts, m.st.PaneTitle.Render("["+paneTitles[t]+"]"))
			} else {
				parts = append(parts, m.st.PaneTitleDim.Render(" "+paneTitles[t]+" "))
			}
		}
		title = strings.Join(parts, "")
		if ansi.StringWidth(title)+4 > w {
			title = m.st.PaneTitle.Render("["+paneTitles[p]+"]") + m.st.PaneHint.Render(" tab ▸")
		}
	} else {
		title = m.st.PaneTitle.Render(m.paneTitle(p))
		if hint := m.paneHint(p); hint != "" && ansi.StringWidth(title)+ansi.StringWidth(hint)+9 <= w {
			title += m.st.PaneHint.Render(" · " + hint)
		}
	}
	title = ansi.Truncate(title, max(w-5, 0), "…")
	fill := max(w-5-ansi.StringWidth(title), 0)
	var b strings.Builder
	b.WriteString(border.Render("╭─") + " " + title + " " + border.Render(strings.Repeat("─", fill)+"╮") + "\n")
	side := border.Render("│")
	for i := 0; i < innerH; i++ {
		line := ""
		if i < len(lines) {
			line = lines[i]
		}
		b.WriteString(side + pad(line, innerW) + side + "\n")
	}
	b.WriteString(border.Render("╰" + strings.Repeat("─", max(w-2, 0)) + "╯"))
	return b.String()
}

func (m Model) paneTitle(p pane) string {
	switch p {
	case paneLesson:
		return m.lesson.Title()
	case paneExercises:
		return m.exercises.Title()
	}
	return paneTitles[p]
}

func (m Model) paneHint(p pane) string {
	switch p {
	case paneLesson:
		return m.lesson.Hint()
	case paneExercises:
		return m.exercises.Hint()
	}
	return paneHints[p]
}

func (m Model) paneLines(p pane, w, h int) []string {
	switch p {
	case paneSequence:
		return m.sequenceLines(w, h)
	case paneQueue:
		return m.queueLines(w, h)
	case paneObjects:
		return m.objectLines(w, h)
	case paneBackoff:
		return m.backoffLines(w, h)
	case panePatterns:
		return m.patternLines(w, h)
	case paneLesson:
		return m.lesson.View() // sized in setSize, like the frame it fills
	case paneExercises:
		return m.exercises.View()
	}
	return nil
}
