package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
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

func (m Model) layout() layoutKind {
	switch {
	case m.width < minWidth || m.height < minHeight:
		return layoutTooSmall
	case m.width >= 120 && m.height >= 34:
		return layoutFull
	case m.width >= 80 && m.height >= 22:
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
		return m.viewStartup()
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

// lessonTextArea is the size of the lesson text inside its pane: the frame
// and the demo line take the rest.
func (m Model) lessonTextArea() (w, h int) {
	bodyH := m.bodyHeight()
	return max(m.width-2, 1), max(bodyH-m.layerSplit(bodyH)-2-1, 0)
}

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
		return m.lessonTitle()
	case paneExercises:
		return m.exercisesTitle()
	}
	return paneTitles[p]
}

func (m Model) paneHint(p pane) string {
	switch p {
	case paneLesson:
		return m.lessonHint()
	case paneExercises:
		return m.exercisesHint()
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
		return m.lessonLines(w, h)
	case paneExercises:
		return m.exercisesLines(w, h)
	}
	return nil
}

func (m Model) titleText() string { return m.labTitle(true) }

// labTitle names the lab, with its title when withTitle.
func (m Model) labTitle(withTitle bool) string {
	title := "lab"
	switch {
	case m.header.Lab != "":
		title += " " + m.header.Lab
	case m.replay != nil:
		title += " replay"
	}
	s := m.st.Title.Render(title)
	if withTitle && m.header.Title != "" {
		s += m.st.Bold.Render(" · " + m.header.Title)
	}
	return s
}

// Header levels: each leaves more out of the header's first line, for
// when it does not fit beside the badges. The address goes first (the
// session's kubeconfig has it), the lab's name and the operator stay.
const (
	headerFull = iota
	headerShort
	headerNoAddress
	headerNoTitle
	headerNoVersion
	headerNoNamespace
)

// viewHeader: the lab and its control plane, whose operator runs, the
// exercises and mode badges, the switches.
func (m Model) viewHeader() string {
	badge := m.badge()
	if ex := m.exercisesBadge(); ex != "" {
		badge = ex + "  " + badge
	}
	level := headerFull
	if m.width < 110 {
		level = headerShort
	}
	left := m.headerLeft(level)
	for ; ansi.StringWidth(left)+ansi.StringWidth(badge)+2 > m.width && level < headerNoNamespace; level++ {
		left = m.headerLeft(level + 1)
	}
	gap := m.width - ansi.StringWidth(left) - ansi.StringWidth(badge) - 1
	var line1 string
	if gap < 1 {
		line1 = clip(left, m.width-ansi.StringWidth(badge)-2) + " " + badge
	} else {
		line1 = left + strings.Repeat(" ", gap) + badge
	}
	return clip(line1, m.width) + "\n" + clip(m.switchLine(), m.width)
}

// headerLeft is the header's first line without the badges, at a level.
func (m Model) headerLeft(level int) string {
	st := m.st
	left := " " + m.labTitle(level < headerNoTitle)
	if m.header.Operator != "" {
		left += "   " + st.Info.Render(m.header.Operator)
	}
	var info []string
	if m.replay != nil {
		if m.header.Source != "" {
			info = append(info, "trace "+m.header.Source)
		}
		if len(m.replay.trace) > 0 {
			info = append(info, "t+"+formatDuration(m.now().Sub(m.replay.trace[0].Time)))
		}
	} else {
		version, address := "Kubernetes "+m.header.KubernetesVersion, strings.TrimSuffix(m.header.Address, "/")
		if level >= headerShort {
			version, address = "k8s "+m.header.KubernetesVersion, strings.TrimPrefix(address, "https://")
		}
		if m.header.KubernetesVersion != "" && level < headerNoVersion {
			info = append(info, version)
		}
		if address != "" && level < headerNoAddress {
			info = append(info, address)
		}
		if m.header.Namespace != "" && level < headerNoNamespace {
			info = append(info, "namespace "+m.header.Namespace)
		}
		if !m.header.Started.IsZero() {
			info = append(info, "up "+formatUptime(m.now().Sub(m.header.Started)))
		}
	}
	if len(info) > 0 {
		left += st.Faint.Render("   " + strings.Join(info, " · "))
	}
	return left
}

func (m Model) badge() string {
	st := m.st
	switch {
	case m.replay != nil:
		label := fmt.Sprintf("▶ REPLAY %d/%d", m.replay.cursor, len(m.replay.trace))
		if !m.replay.playing {
			label = fmt.Sprintf("❚❚ REPLAY %d/%d", m.replay.cursor, len(m.replay.trace))
		}
		return st.BadgeReplay.Render(label)
	case m.paused:
		return st.BadgePaused.Render(fmt.Sprintf(" ❚❚ PAUSED · %d waiting at the gate ", m.waiting))
	case m.closed:
		return st.Bad.Render("■ STOPPED")
	case m.controlPlaneLost:
		return st.Bad.Render("✕ NO CONTROL PLANE")
	}
	return st.BadgeLive.Render("● LIVE")
}

// switchLine shows every switch with its value; the one just changed stands out.
func (m Model) switchLine() string {
	st := m.st
	type pair struct{ name, value string }
	var pairs []pair
	if m.replay != nil || len(m.switches) == 0 {
		names, values := m.state.Switches()
		for _, n := range names {
			pairs = append(pairs, pair{n, values[n]})
		}
	} else {
		for _, s := range m.switches {
			pairs = append(pairs, pair{s.Name, s.Value})
		}
	}
	if len(pairs) == 0 {
		return " " + st.Faint.Render("switches: none reported yet")
	}
	recent := m.changed != "" && m.clock().Sub(m.changedAt) < statusFor
	render := func(short bool) string {
		parts := make([]string, 0, len(pairs))
		for _, p := range pairs {
			name, value := p.name, p.value
			if p.name == switchTimescale {
				value += "×"
			}
			if short {
				name = firstNonEmpty(shortSwitchNames[name], name)
			}
			vs := st.Value
			if recent && p.name == m.changed {
				vs = st.Changed
				value = "‹" + value + "›"
			}
			parts = append(parts, st.Label.Render(name+"=")+vs.Render(value))
		}
		sep := "  "
		if short {
			sep = " "
		}
		return " " + strings.Join(parts, sep)
	}
	if line := render(false); ansi.StringWidth(line) <= m.width {
		return line
	}
	return render(true)
}

// shortSwitchNames keep the switch line on one row of a narrow terminal.
var shortSwitchNames = map[string]string{switchRateLimit: "limiter", switchExternal: "ext", switchTimescale: "speed"}

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
	view := helpView{k: m.keys, replay: m.replay != nil, reading: m.lessonOpen, exercises: m.exercises != nil}
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

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// displayKey shortens keys in the session namespace to the object's name.
func (m Model) displayKey(key string) string {
	if ns := m.header.Namespace; ns != "" && strings.HasPrefix(key, ns+"/") {
		return key[len(ns)+1:]
	}
	return key
}

// clip cuts a (styled) line to w cells.
func clip(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// pad clips or pads a (styled) line to exactly w cells.
func pad(s string, w int) string {
	n := ansi.StringWidth(s)
	switch {
	case n > w:
		return clip(s, w)
	case n < w:
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

// formatDuration prints a duration short and readable: 850µs, 12ms, 1.2s, 3m05s.
func formatDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + formatDuration(-d)
	case d == 0:
		return "0s"
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < 10*time.Millisecond && d%time.Millisecond != 0:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < 10*time.Second && d%time.Second != 0:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d%time.Minute == 0 && d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

func formatUptime(d time.Duration) string {
	return formatDuration(d.Truncate(time.Second))
}
