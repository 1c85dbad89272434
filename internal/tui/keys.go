package tui

import (
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"

	"github.com/operator-lab/lab/internal/l10n"
	"github.com/operator-lab/lab/operator/switches"
)

// Every component has its own key map (bubbles key.Binding sets, shown
// through ShortHelp and FullHelp); the root enables the bindings that
// apply in the current mode (configure), which also hides the others from
// the help. What follows is the root's own keys, and how the root puts the
// components' help together for the footer and the ? overlay.

// bind is a binding with its help.
func bind(keys []string, helpKey, desc string) key.Binding {
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(helpKey, desc))
}

// rootKeys are the keys that mean the same on every layer.
type rootKeys struct {
	Help, Quit, CloseLayer key.Binding
}

// newRootKeys names the keys in p's language: bubbles/help shows the
// names as they are.
func newRootKeys(p l10n.Printer) rootKeys {
	return rootKeys{
		Help:       bind([]string{"?"}, "?", p.Text("all keys")),
		Quit:       bind([]string{"q", "ctrl+c"}, "q", p.Text("quit")),
		CloseLayer: bind([]string{"esc"}, "esc", p.Text("close")),
	}
}

// keyExplanations say more about a key in the ? overlay, after its name,
// where the overlay is wide enough. They are looked up by the binding's
// help key and name ("l ratelimit"), so a key keeps one name — in the
// footer and the overlay, at every width — and its explanation only adds
// to it. Keys that need none (scrolling) have none. The names are the
// bindings' English ones; explanations looks them up in a language.
var keyExplanations = []struct{ key, name, text string }{
	{"r", switches.NameRequeue, "error → requeue → after → terminal"},
	{"b", switches.NameBreaker, l10n.Mark("circuit breaker on/off")},
	{"l", switches.NameRateLimit, l10n.Mark("rate limiter on/off")},
	{"e", switches.NameExternal, l10n.Mark("the external system's health")},
	{"o", switches.NameBackoff, l10n.Mark("rate limiter or lesson 5s·2ⁿ")},
	{"+", "faster", l10n.Mark("timescale up (delays run faster)")},
	{"-", "slower", l10n.Mark("timescale down")},
	{"c", "create", l10n.Mark("another object (C: an invalid one)")},
	{"u", "update", l10n.Mark("change the selected object's spec")},
	{"m", "burst", l10n.Mark("5 quick spec changes")},
	{"d", "delete", l10n.Mark("the selected object")},
	{"p", "pause", l10n.Mark("gate before each reconcile / resume")},
	{"s", "step", l10n.Mark("let one reconcile through")},
	{"tab", "pane", l10n.Mark("next of the panes sharing a slot")},
	{"↑/k", "select", l10n.Mark("the previous object")},
	{"↓/j", "select", l10n.Mark("the next object")},
	{"[", "older", l10n.Mark("pin an older reconcile")},
	{"]", "newer", l10n.Mark("pin a newer one, then follow")},
	{"f", "follow", l10n.Mark("the sequence shows the latest")},
	{"enter", "detail", l10n.Mark("the reconcile in full, error too")},
	{"esc", "back", l10n.Mark("close the detail")},
	{"←", "prev event", l10n.Mark("one event back")},
	{"→", "next event", l10n.Mark("one event forward")},
	{"[", "prev reconcile", l10n.Mark("to the end of the one before")},
	{"]", "next reconcile", l10n.Mark("to the end of the next one")},
	{"g", "start", l10n.Mark("of the trace")},
	{"G", "end", l10n.Mark("of the trace")},
	{"space", "play", l10n.Mark("play or pause the replay")},
	{"L", "lesson", l10n.Mark("the lab's text beside the operator")},
	{"w", "see this", l10n.Mark("run the section's demo on the operator")},
	{"x", "exercises", l10n.Mark("your workspace's progress")},
	{"esc", "close", l10n.Mark("the lesson or the exercises")},
	{"?", "all keys", l10n.Mark("this help")},
}

// explanations are keyExplanations in p's language, by help key and name
// as the bindings, built with p, show them: a switch's key is named as the
// switch is, in every language.
func explanations(p l10n.Printer) map[string]string {
	out := make(map[string]string, len(keyExplanations))
	for _, e := range keyExplanations {
		name := e.name
		if !slices.Contains(switches.Names(), name) {
			name = p.Text(name)
		}
		out[e.key+" "+name] = p.Text(e.text)
	}
	return out
}

// keyLabel is a binding's help key with every other key it answers to:
// "p/space" for pause, "+/=" for faster. What the help lists is what works.
func keyLabel(kb key.Binding) string {
	label := kb.Help().Key
	shown := map[string]bool{}
	for _, part := range strings.Split(label, "/") {
		shown[part] = true
	}
	for _, k := range kb.Keys() {
		if name := keyName(k); !shown[name] {
			label += "/" + name
			shown[name] = true
		}
	}
	return label
}

// keyName is how the help writes a key bubbletea names k.
func keyName(k string) string {
	switch k {
	case " ":
		return "space"
	case "up":
		return "↑"
	case "down":
		return "↓"
	case "left":
		return "←"
	case "right":
		return "→"
	case "pgdown":
		return "pgdn"
	}
	return k
}

// configure enables, in every component, the bindings that apply now:
// it runs whenever what decides them changes (a layer opens, the lesson
// moves to another section, the controls or a workspace arrive, a resize
// changes which panes share a slot).
func (m *Model) configure() {
	reading := m.shown() == layerLesson
	m.dash.configure(m.c.replay, reading)
	m.live.configure()
	m.lesson.configure(reading)
	m.exercises.configure(!m.c.replay || m.exercises.known(), m.shown() == layerExercises)
	m.detail.configure(m.detailOpen())
	m.keys.CloseLayer.SetEnabled(m.shown() == layerLesson || m.shown() == layerExercises)
	if m.layer == layerHelp {
		m.help.setGroups(m.helpGroups())
	}
}

// shortHelp is the footer's list, the keys a learner needs first: those
// of what is open to read, then the replay's or the running lab's, then
// the dashboard's; "? all keys" and "q quit" end it.
func (m Model) shortHelp() []key.Binding {
	if m.detailOpen() {
		return append(m.detail.ShortHelp(), m.keys.Help, m.keys.Quit)
	}
	reading := m.shown() == layerLesson
	var items []key.Binding
	if reading {
		items = m.lesson.ShortHelp()
	}
	items = append(items, m.exercises.ShortHelp()...)
	switch {
	case m.replay != nil && reading:
		items = append(items, m.replay.ShortHelp()...)
	case m.replay != nil:
		items = append(append(items, m.replay.ShortHelp()...), m.detail.keys.Open)
		items = append(items, m.dash.ShortHelp()...)
		items = append(items, m.lesson.keys.Toggle)
	case reading:
		items = append(items, m.live.ShortHelp()...)
	default:
		items = append(append(items, m.lesson.keys.Toggle), m.live.ShortHelp()...)
		items = append(append(items, m.detail.keys.Open), m.dash.ShortHelp()...)
	}
	return append(items, m.keys.Help, m.keys.Quit)
}

// helpGroup is one titled column of the ? overlay.
type helpGroup struct {
	title string
	keys  []key.Binding
}

// helpGroups are the ? overlay's columns: the replay's or the running
// lab's keys, the dashboard's, and the lesson's with the exercises key and
// esc (they open and close the layer below the operator) — or, over the
// reconcile detail, the detail's alone. Each group is every key of its
// components' key maps; the overlay shows those enabled, so what a mode
// or a lab turns off leaves the help by itself.
func (m Model) helpGroups() []helpGroup {
	say := m.c.say
	if m.help.under == layerDetail {
		return []helpGroup{{say.Text("Reconcile detail"), append(m.detail.FullHelp()[0], m.keys.Help, m.keys.Quit)}}
	}
	view := helpGroup{say.Text("View"), append(m.dash.FullHelp()[0], m.detail.keys.Open, m.keys.Help, m.keys.Quit)}
	reading := helpGroup{say.Text("Lesson"), append(append(m.lesson.FullHelp()[0], m.exercises.FullHelp()[0]...), m.keys.CloseLayer)}
	if m.exercises.known() {
		reading.title = say.Text("Lesson & exercises")
	}
	if m.replay != nil {
		return []helpGroup{{say.Text("Replay"), m.replay.FullHelp()[0]}, view, reading}
	}
	l := m.live.FullHelp()
	return []helpGroup{{say.Text("Switches"), l[0]}, {say.Text("Objects & step-through"), l[1]}, view, reading}
}

// helpOnly is b shown under another key label: one help entry for a pair
// of bindings. It keeps b's keys, so it is enabled exactly when b is.
func helpOnly(b key.Binding, keys, desc string) key.Binding {
	b.SetHelp(keys, desc)
	return b
}

func anyEnabled(bindings []key.Binding) bool {
	for _, b := range bindings {
		if b.Enabled() {
			return true
		}
	}
	return false
}
