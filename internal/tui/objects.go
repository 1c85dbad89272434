package tui

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/operator-lab/lab/operator/api/v1alpha1"

	"github.com/charmbracelet/x/ansi"

	"github.com/operator-lab/lab/internal/l10n"
	"github.com/operator-lab/lab/internal/tui/state"
)

// Phases of the 4.4 state machine, in order along the happy path, and the
// states off it.
var (
	happyPath = phaseNames(v1alpha1.HappyPath)
	sidePath  = phaseNames(v1alpha1.Phases()[len(v1alpha1.HappyPath):])
	shortName = map[string]string{
		"Pending": "Pend", "Provisioning": "Prov", "Configuring": "Conf", "Deploying": "Depl",
		"Verifying": "Verif", "Ready": "Ready", "Failed": "Fail", "Updating": "Upd",
	}
)

// phasedKind is the kind whose status reports a phase of that state
// machine; lab 3.1's HelloWorld has none, so its objects get no state
// machine and no "no phase reported yet".
var phasedKind = reflect.TypeOf(v1alpha1.Database{}).Name()

// hasPhases reports whether an object goes through phases: its kind has
// them, or it reported one.
func hasPhases(o *state.Object) bool {
	return o.Kind == phasedKind || o.Phase != "" || o.History.Len() > 0
}

func phaseNames(phases []v1alpha1.Phase) []string {
	out := make([]string, len(phases))
	for i, p := range phases {
		out[i] = string(p)
	}
	return out
}

// objectsPane is every object on one line, the selected one expanded with
// its state machine, phase history and conditions.
type objectsPane struct {
	c *common
	f *focus
	size
}

// Title and Hint name phases only when the objects have them (not lab
// 3.1's HelloWorlds).
func (p *objectsPane) Title() string {
	if p.phased() {
		return p.c.say.Text("Objects & phases")
	}
	return p.c.say.Text("Objects")
}

func (p *objectsPane) Hint() string {
	if p.phased() {
		return p.c.say.Text("state machine, current phase in [ ]")
	}
	return p.c.say.Text("conditions and the last result")
}

// phased: until an object arrives the pane cannot tell (and says what it
// always said); then only objects that go through phases make it so.
func (p *objectsPane) phased() bool {
	objects := p.c.state.Objects()
	for _, o := range objects {
		if hasPhases(o) {
			return true
		}
	}
	return len(objects) == 0
}

func (p *objectsPane) View() []string {
	st, w, h := p.c.st, p.width, p.height
	objects := p.c.state.Objects()
	if len(objects) == 0 {
		hint := p.c.say.Text("No objects yet. Press c to create one.")
		if p.c.replay {
			hint = p.c.say.Text("No objects yet.")
		}
		return []string{st.Faint.Render(hint)}
	}
	sel, _ := p.f.object(p.c.state)
	selIdx := 0
	for i, o := range objects {
		if o == sel {
			selIdx = i
		}
	}
	detail := p.objectDetail(sel)
	room := max(h-len(detail), 1)
	// A window of object lines that keeps the selected one visible.
	first := 0
	if len(objects) > room {
		first = min(max(selIdx-room/2, 0), len(objects)-room)
	}
	var lines []string
	for i := first; i < len(objects) && len(lines) < room; i++ {
		lines = append(lines, p.objectLine(objects[i], objects[i] == sel))
		if objects[i] == sel {
			lines = append(lines, detail...)
		}
	}
	if len(objects) > room {
		lines[0] = pad(lines[0], w-8) + st.Faint.Render(fmt.Sprintf(" %d/%d", selIdx+1, len(objects)))
	}
	return lines
}

func (p *objectsPane) objectLine(o *state.Object, selected bool) string {
	st, say := p.c.st, p.c.say
	mark, keyStyle := "  ", st.Plain
	if selected {
		mark, keyStyle = st.Selected.Render("▸ "), st.Selected
	}
	line := mark + keyStyle.Render(p.c.displayKey(o.Key))
	if o.Kind != "" {
		line += st.Faint.Render(" " + o.Kind)
	}
	if o.Deleted {
		return line + st.Faint.Render(say.Text("  deleted"))
	}
	if o.Phase != "" {
		line += "  " + p.phaseStyle(o.Phase).Render(o.Phase) + st.Faint.Render(" "+formatDuration(p.c.now().Sub(o.PhaseSince).Truncate(100*time.Millisecond)))
	}
	if o.LastResult != "" {
		line += st.Faint.Render(say.Text("  last: ")) + st.Result(o.LastResult).Render(o.LastResult)
	}
	return line
}

func (p *objectsPane) phaseStyle(phase string) Ink {
	switch phase {
	case "Ready":
		return p.c.st.OK
	case "Failed":
		return p.c.st.Bad
	}
	return p.c.st.Warn
}

// objectDetail: the state machine with the current phase in brackets, the
// history of transitions with the time spent in each, and the conditions.
func (p *objectsPane) objectDetail(o *state.Object) []string {
	st, say, w := p.c.st, p.c.say, p.width
	if o == nil {
		return nil
	}
	var lines []string
	if o.Phase != "" || o.History.Len() > 0 {
		visited := map[string]bool{}
		for _, c := range o.History.Slice() {
			visited[c.From], visited[c.To] = true, true
		}
		cells := func(phases []string, short bool) []string {
			out := make([]string, len(phases))
			for i, ph := range phases {
				name := ph
				if short {
					name = shortName[ph]
				}
				out[i] = p.phaseCell(name, ph == o.Phase, visited[ph])
			}
			return out
		}
		arrow := st.Faint.Render(" › ")
		side := "  " + st.Faint.Render(say.Text("also ")) + strings.Join(cells(sidePath, false), st.Faint.Render(" · "))
		full := "  " + strings.Join(cells(happyPath, false), arrow)
		switch {
		case ansi.StringWidth(full) <= w:
			lines = append(lines, full, side)
		case w >= 44:
			// Two rows keep the full names readable in a narrow pane.
			c := cells(happyPath, false)
			lines = append(lines, "  "+strings.Join(c[:3], arrow)+arrow, "    "+strings.Join(c[3:], arrow), side)
		default:
			lines = append(lines, "  "+strings.Join(cells(happyPath, true), arrow), side)
		}
		if o.History.Len() > 0 {
			lines = append(lines, "  "+p.phaseHistory(o, w-2))
		}
	} else if hasPhases(o) {
		lines = append(lines, "  "+st.Faint.Render(phaseNotYet(say, o.Reconciles)))
	}
	if len(o.Conditions) > 0 {
		var parts []string
		for _, c := range o.Conditions {
			s := st.OK
			mark := "✓"
			if c.Status != "True" {
				s, mark = st.Warn, "✗"
			}
			text := fmt.Sprintf("%s %s=%s", mark, c.Type, c.Status)
			if c.Reason != "" {
				text += " " + c.Reason
			}
			parts = append(parts, s.Render(text))
		}
		lines = append(lines, "  "+st.Faint.Render(say.Text("conditions "))+strings.Join(parts, "  "))
	}
	if o.LastError != "" {
		lines = append(lines, "  "+st.Bad.Render(say.Textf("last error: %s", o.LastError)))
	}
	return lines
}

// phaseNotYet is an object of a phased kind before its first phase.
func phaseNotYet(say l10n.Printer, reconciles int) string {
	return say.Count(reconciles, "%d reconcile(s), no phase reported yet", "%d reconcile(s), no phase reported yet")
}

func (p *objectsPane) phaseCell(name string, current, visited bool) string {
	switch {
	case current:
		return p.c.st.PhaseCurrent.Render("[" + name + "]")
	case visited:
		return p.c.st.PhaseVisited.Render(name)
	}
	return p.c.st.PhaseAhead.Render(name)
}

// phaseHistory: "Pending 0.5s → Provisioning 1.2s → … → Ready (now 12s)",
// keeping the newest transitions when it does not fit.
func (p *objectsPane) phaseHistory(o *state.Object, w int) string {
	st, say := p.c.st, p.c.say
	changes := o.History.Slice()
	parts := make([]string, 0, len(changes)+1)
	for _, c := range changes {
		if c.From == "" {
			continue
		}
		parts = append(parts, c.From+" "+formatDuration(c.InFrom))
	}
	parts = append(parts, say.Textf("%s (now %s)", o.Phase, formatDuration(p.c.now().Sub(o.PhaseSince).Truncate(100*time.Millisecond))))
	// Keep the newest transitions that fit; "…" marks the ones left out.
	dropped := false
	for {
		text := strings.Join(parts, " → ")
		if dropped {
			text = "… → " + text
		}
		if len(parts) == 1 || ansi.StringWidth(text)+8 <= w {
			return st.Faint.Render(say.Text("history ")) + text
		}
		parts, dropped = parts[1:], true
	}
}
