package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/operator-lab/lab/internal/l10n"
)

// The smallest terminal the dashboard draws in; below it a message says so.
const (
	minWidth  = 60
	minHeight = 16
)

// pane names a pane of the dashboard.
type pane int

const (
	paneSequence pane = iota
	paneQueue
	paneObjects
	paneBackoff
	panePatterns
	paneCount
)

// framed is what is drawn in a frame: a pane of the dashboard, or the
// layer (lesson, exercises) below it.
type framed interface {
	Title() string
	Hint() string
	View() []string
}

// paneComponent is a pane of the dashboard: the dashboard sizes it for
// its frame and draws it there.
type paneComponent interface {
	framed
	SetSize(w, h int)
}

// size is a component's cells inside its frame, set by SetSize.
type size struct{ width, height int }

func (s *size) SetSize(w, h int) { s.width, s.height = w, h }

// layoutKind is how the panes are arranged for the terminal size.
type layoutKind int

const (
	layoutTooSmall layoutKind = iota
	layoutCompact             // one pane at a time, tabs
	layoutMedium              // sequence on top; queue + a tabbed pane below
	layoutFull                // every pane at once
)

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

// dashboardKeys move around the dashboard: between the panes that share
// a slot, through the objects, and back through the reconciles.
type dashboardKeys struct {
	NextPane, PrevPane           key.Binding
	Up, Down                     key.Binding
	PrevRecon, NextRecon, Follow key.Binding
}

func newDashboardKeys(p l10n.Printer) dashboardKeys {
	return dashboardKeys{
		NextPane:  bind([]string{"tab"}, "tab", p.Text("pane")),
		PrevPane:  bind([]string{"shift+tab"}, "shift+tab", p.Text("pane back")),
		Up:        bind([]string{"up", "k"}, "↑/k", p.Text("select")),
		Down:      bind([]string{"down", "j"}, "↓/j", p.Text("select")),
		PrevRecon: bind([]string{"["}, "[", p.Text("older")),
		NextRecon: bind([]string{"]"}, "]", p.Text("newer")),
		Follow:    bind([]string{"f", "end"}, "f", p.Text("follow")),
	}
}

// dashboard is the panes of the running operator, arranged for the
// terminal, with the layer (lesson, exercises) below them when one is
// open. A component of the root: SetSize chooses the arrangement and
// sizes every pane once, Update takes the keys that move around it, View
// draws the frames.
type dashboard struct {
	c     *common
	keys  dashboardKeys
	focus focus
	panes [paneCount]paneComponent
	layer framed // open below the panes; nil when none

	width, height int
	kind          layoutKind
	plan          [][]column // rows of columns of frames, chosen in arrange
	tab           int        // the active pane of the layout's tab group
}

// column is frames drawn one above the other.
type column []slot

// slot is one frame of the arrangement: a pane, the panes sharing a
// slot (tabs), or the layer.
type slot struct {
	kind slotKind
	pane pane
	w, h int
}

type slotKind int

const (
	slotPane slotKind = iota
	slotTabs
	slotLayer
)

func newDashboard(c *common) *dashboard {
	d := &dashboard{c: c, keys: newDashboardKeys(c.say)}
	d.panes = [paneCount]paneComponent{
		paneSequence: &sequencePane{c: c, f: &d.focus},
		paneQueue:    &queuePane{c: c},
		paneObjects:  &objectsPane{c: c, f: &d.focus},
		paneBackoff:  &backoffPane{c: c, f: &d.focus},
		panePatterns: &patternsPane{c: c},
	}
	return d
}

// SetSize takes the body's size (between header and footer); the layout
// is chosen for the whole terminal.
func (d *dashboard) SetSize(w, h int) {
	d.width, d.height = w, h
	d.kind = layoutFor(w, h+chromeRows)
	d.arrange()
}

// setLayer puts a layer below the panes (nil takes it away); the panes
// left above it are sized again.
func (d *dashboard) setLayer(l framed) {
	d.layer = l
	d.arrange()
}

// layerSplit is how many rows of the body stay above an open layer, which
// takes the rest: the top row of panes in the full layout, the sequence in
// the medium one, nothing in the compact one.
func (d *dashboard) layerSplit() int {
	switch d.kind {
	case layoutFull:
		return d.height / 2
	case layoutMedium:
		return d.height * 2 / 5
	}
	return 0
}

// layerSize is the cells inside the layer's frame.
func (d *dashboard) layerSize() (w, h int) {
	return max(d.width-2, 1), max(d.height-d.layerSplit()-2, 0)
}

// arrange chooses where each frame goes and sizes the panes for them.
func (d *dashboard) arrange() {
	w, h := d.width, d.height
	p := func(pn pane, w, h int) slot { return slot{kind: slotPane, pane: pn, w: w, h: h} }
	seqW := w * 13 / 20
	// The full layout's top row: the sequence, with the queue above the
	// patterns beside it.
	fullTop := func(topH int) []column {
		queueH := topH / 2
		return []column{{p(paneSequence, seqW, topH)}, {p(paneQueue, w-seqW, queueH), p(panePatterns, w-seqW, topH-queueH)}}
	}
	switch {
	case d.layer != nil:
		topH := d.layerSplit()
		below := []column{{{kind: slotLayer, w: w, h: h - topH}}}
		switch d.kind {
		case layoutFull:
			d.plan = [][]column{fullTop(topH), below}
		case layoutMedium:
			d.plan = [][]column{{{p(paneSequence, w, topH)}}, below}
		default:
			d.plan = [][]column{below}
		}
	case d.kind == layoutFull:
		topH, half := h*3/5, w/2
		d.plan = [][]column{fullTop(topH), {{p(paneObjects, half, h-topH)}, {p(paneBackoff, w-half, h-topH)}}}
	case d.kind == layoutMedium:
		topH, queueW := h*11/20, w*2/5
		d.plan = [][]column{{{p(paneSequence, w, topH)}},
			{{p(paneQueue, queueW, h-topH)}, {{kind: slotTabs, w: w - queueW, h: h - topH}}}}
	default:
		d.plan = [][]column{{{{kind: slotTabs, w: w, h: h}}}}
	}
	for _, row := range d.plan {
		for _, col := range row {
			for _, s := range col {
				innerW, innerH := max(s.w-2, 1), max(s.h-2, 0)
				switch s.kind {
				case slotPane:
					d.panes[s.pane].SetSize(innerW, innerH)
				case slotTabs:
					for _, t := range d.tabGroup() {
						d.panes[t].SetSize(innerW, innerH)
					}
				}
			}
		}
	}
}

// tabGroup is the panes that share one slot in the current layout. None
// do while a layer is open: it takes the slot they share.
func (d *dashboard) tabGroup() []pane {
	if d.layer != nil {
		return nil
	}
	switch d.kind {
	case layoutCompact:
		return []pane{paneSequence, paneQueue, paneObjects, paneBackoff, panePatterns}
	case layoutMedium:
		return []pane{paneObjects, paneBackoff, panePatterns}
	}
	return nil
}

func (d *dashboard) activeTab() pane {
	group := d.tabGroup()
	if len(group) == 0 {
		return paneSequence
	}
	i := ((d.tab % len(group)) + len(group)) % len(group)
	return group[i]
}

// configure enables the keys that apply: tab where panes share a slot,
// the arrows unless the lesson (which they scroll) is open, and the
// history keys live (a replay moves through history with its own).
func (d *dashboard) configure(replay, reading bool) {
	k := &d.keys
	tabs := len(d.tabGroup()) > 0
	k.NextPane.SetEnabled(tabs)
	k.PrevPane.SetEnabled(tabs)
	k.Up.SetEnabled(!reading)
	k.Down.SetEnabled(!reading)
	k.PrevRecon.SetEnabled(!replay)
	k.NextRecon.SetEnabled(!replay)
	k.Follow.SetEnabled(!replay)
}

// Update takes the dashboard's keys; handled is false for any other message.
func (d *dashboard) Update(msg tea.Msg) (cmd tea.Cmd, handled bool) {
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		return nil, false
	}
	s := d.c.state
	switch k := d.keys; {
	case key.Matches(km, k.NextPane):
		d.tab++
	case key.Matches(km, k.PrevPane):
		d.tab--
	case key.Matches(km, k.Up):
		d.focus.move(s, -1)
	case key.Matches(km, k.Down):
		d.focus.move(s, 1)
	case key.Matches(km, k.PrevRecon):
		d.focus.pin(s, -1)
	case key.Matches(km, k.NextRecon):
		d.focus.pin(s, 1)
	case key.Matches(km, k.Follow):
		d.focus.pinned = 0
	default:
		return nil, false
	}
	return nil, true
}

// ShortHelp and FullHelp are the dashboard's part of the footer and of
// the ? overlay's View column.
func (d *dashboard) ShortHelp() []key.Binding {
	k := d.keys
	return []key.Binding{k.NextPane, k.PrevRecon, k.NextRecon}
}

func (d *dashboard) FullHelp() [][]key.Binding {
	k := d.keys
	return [][]key.Binding{{k.NextPane, k.PrevPane, k.Up, k.Down, k.PrevRecon, k.NextRecon, k.Follow}}
}

// View draws the arrangement SetSize chose.
func (d *dashboard) View() string {
	rows := make([]string, 0, len(d.plan))
	for _, row := range d.plan {
		cols := make([]string, 0, len(row))
		for _, col := range row {
			frames := make([]string, 0, len(col))
			for _, s := range col {
				frames = append(frames, d.frameSlot(s))
			}
			cols = append(cols, strings.Join(frames, "\n"))
		}
		rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, cols...))
	}
	return strings.Join(rows, "\n")
}

// frameSlot draws one slot in its frame: the frames of the layer and of
// the tab group stand out, being what the learner moves in.
func (d *dashboard) frameSlot(s slot) string {
	st := d.c.st
	switch s.kind {
	case slotLayer:
		return drawFrame(st.BorderFocus, titleWithHint(st, d.layer, s.w), d.layer.View(), s.w, s.h)
	case slotTabs:
		active := d.activeTab()
		return drawFrame(st.BorderFocus, d.tabTitle(active, s.w), d.panes[active].View(), s.w, s.h)
	}
	p := d.panes[s.pane]
	return drawFrame(st.Border, titleWithHint(st, p, s.w), p.View(), s.w, s.h)
}

// tabTitle names every tab of the group with the active one marked, or
// only the active one when they do not fit.
func (d *dashboard) tabTitle(active pane, w int) string {
	st := d.c.st
	var b strings.Builder
	for _, t := range d.tabGroup() {
		if t == active {
			b.WriteString(st.PaneTitle.Render("[" + d.panes[t].Title() + "]"))
		} else {
			b.WriteString(st.PaneTitleDim.Render(" " + d.panes[t].Title() + " "))
		}
	}
	if title := b.String(); ansi.StringWidth(title)+4 <= w {
		return title
	}
	return st.PaneTitle.Render("["+d.panes[active].Title()+"]") + st.PaneHint.Render(" tab ▸")
}
