package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/operator-lab/lab/operator/switches"
)

// labTitle names the lab, with its title when withTitle.
func (m Model) labTitle(withTitle bool) string {
	title := "lab"
	switch {
	case m.header.Lab != "":
		title += " " + m.header.Lab
	case m.replay != nil:
		title += " replay" // the command that opened it, in every language
	}
	s := m.c.st.Title.Render(title)
	if withTitle && m.header.Title != "" {
		s += m.c.st.Bold.Render(" · " + m.header.Title)
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
	if ex := m.exercises.badge(); ex != "" {
		badge = ex + "  " + badge
	}
	// Every switch keeps its one name at every width; when they do not all
	// fit on the second line, the timescale joins the uptime on the first.
	line2, aside := m.switchLine(""), ""
	if ansi.StringWidth(line2) > m.width {
		line2, aside = m.switchLine(switches.NameTimescale), m.switchPair(switches.NameTimescale)
	}
	level := headerFull
	if m.width < 110 {
		level = headerShort
	}
	left := m.headerLeft(level, aside)
	for ; ansi.StringWidth(left)+ansi.StringWidth(badge)+2 > m.width && level < headerNoNamespace; level++ {
		left = m.headerLeft(level+1, aside)
	}
	gap := m.width - ansi.StringWidth(left) - ansi.StringWidth(badge) - 1
	var line1 string
	if gap < 1 {
		line1 = clip(left, m.width-ansi.StringWidth(badge)-2) + " " + badge
	} else {
		line1 = left + strings.Repeat(" ", gap) + badge
	}
	return clip(line1, m.width) + "\n" + clip(line2, m.width)
}

// headerLeft is the header's first line without the badges, at a level;
// aside is a switch moved up from the second line, "" for none.
func (m Model) headerLeft(level int, aside string) string {
	st, say := m.c.st, m.c.say
	left := " " + m.labTitle(level < headerNoTitle)
	if m.header.Operator != "" {
		left += "   " + st.Info.Render(m.header.Operator)
	}
	var info []string
	if m.replay != nil {
		if m.header.Source != "" {
			info = append(info, say.Textf("trace %s", m.header.Source))
		}
		if elapsed, ok := m.replay.elapsed(); ok {
			info = append(info, "t+"+formatDuration(elapsed))
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
			info = append(info, "namespace "+m.header.Namespace) // the word kubectl and the lessons use
		}
		if !m.header.Started.IsZero() {
			info = append(info, say.Textf("up %s", formatUptime(m.c.now().Sub(m.header.Started))))
		}
	}
	if len(info) > 0 {
		left += st.Faint.Render("   " + strings.Join(info, " · "))
	}
	if aside != "" {
		left += "   " + aside
	}
	return left
}

// badge says what the view shows: a replay, a paused gate, a stopped
// operator, a lost control plane, or the live lab.
func (m Model) badge() string {
	st, say := m.c.st, m.c.say
	paused, waiting := m.c.gate()
	switch {
	case m.replay != nil:
		return m.replay.badge()
	case paused:
		return st.BadgePaused.Render(say.Count(waiting, " ❚❚ PAUSED · %d waiting at the gate ", " ❚❚ PAUSED · %d waiting at the gate "))
	case m.closed:
		return st.Bad.Render(say.Text("■ STOPPED"))
	case m.controlPlaneLost:
		return st.Bad.Render(say.Text("✕ NO CONTROL PLANE"))
	}
	return st.BadgeLive.Render(say.Text("● LIVE"))
}

// switchLine shows every switch with its value but the one left out
// ("" for none); the one just changed stands out.
func (m Model) switchLine(leftOut string) string {
	st, c := m.c.st, m.c
	pairs := c.switches()
	if len(pairs) == 0 {
		return " " + st.Faint.Render(c.say.Text("switches: none reported yet"))
	}
	render := func(sep string) string {
		parts := make([]string, 0, len(pairs))
		for _, p := range pairs {
			if p.name != leftOut {
				parts = append(parts, m.renderPair(p))
			}
		}
		return " " + strings.Join(parts, sep)
	}
	if line := render("  "); ansi.StringWidth(line) <= m.width {
		return line
	}
	return render(" ")
}

// switchPair is one switch as the switch line shows it, "" when the lab
// has no such switch.
func (m Model) switchPair(name string) string {
	for _, p := range m.c.switches() {
		if p.name == name {
			return m.renderPair(p)
		}
	}
	return ""
}

// renderPair is "name=value", the value marked ‹› for a moment after it changed.
func (m Model) renderPair(p shownSwitch) string {
	st, c := m.c.st, m.c
	value, vs := p.value, st.Value
	if p.name == switches.NameTimescale {
		value += "×"
	}
	if c.changed == p.name && c.clock().Sub(c.changedAt) < statusFor {
		vs, value = st.Changed, "‹"+value+"›"
	}
	return st.Label.Render(p.name+"=") + vs.Render(value)
}
