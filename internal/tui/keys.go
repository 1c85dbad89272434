package tui

import (
	"github.com/charmbracelet/bubbles/key"
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

func newRootKeys() rootKeys {
	return rootKeys{
		Help:       bind([]string{"?"}, "?", "all keys"),
		Quit:       bind([]string{"q", "ctrl+c"}, "q", "quit"),
		CloseLayer: bind([]string{"esc"}, "esc", "close"),
	}
}

// longHelp is what the ? overlay says about each key (by its help key, or
// by help key and short description where one key means different things
// in different modes); the footer uses the short descriptions.
var longHelp = map[string]string{
	"r":                 "requeue: error→requeue→after→terminal",
	"b":                 "circuit breaker on/off",
	"l":                 "rate limiter on/off",
	"e":                 "cycle the external system's health",
	"o":                 "backoff: rate limiter or lesson 5s·2ⁿ",
	"+":                 "timescale up (operator delays faster)",
	"-":                 "timescale down",
	"c":                 "create another object",
	"u":                 "change the selected object's spec",
	"m":                 "burst: 5 quick spec changes",
	"d":                 "delete the selected object",
	"p":                 "pause/resume: gate before each reconcile",
	"s":                 "step: let one reconcile through",
	"tab":               "next pane (panes sharing a slot)",
	"shift+tab":         "previous pane",
	"↑/k":               "select previous object",
	"↓/j":               "select next object",
	"[":                 "previous (older) reconcile",
	"]":                 "next (newer) reconcile",
	"f":                 "sequence: follow the latest",
	"←":                 "one event back",
	"→":                 "one event forward",
	"g":                 "start of the trace",
	"G":                 "end of the trace",
	"space":             "play / pause the replay",
	"L":                 "lesson pane: the lab's text beside the operator",
	"L close lesson":    "close the lesson pane (esc too)",
	"<":                 "previous section (, too)",
	">":                 "next section (. too)",
	"↑/k scroll up":     "scroll the lesson up",
	"↓/j scroll down":   "scroll the lesson down",
	"pgup":              "scroll the lesson a page up",
	"pgdn":              "scroll the lesson a page down",
	"w":                 "see this: run the section's demo on the operator",
	"x":                 "exercises: your workspace's progress",
	"x close exercises": "close the exercises (esc too)",
	"?":                 "this help",
	"q":                 "quit (Ctrl-C too)",
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
	if m.layer == layerHelp {
		m.help.setGroups(m.helpGroups())
	}
}

// shortHelp is the footer's list, the keys a learner needs first: those
// of what is open to read, then the replay's or the running lab's, then
// the dashboard's; "? all keys" and "q quit" end it.
func (m Model) shortHelp() []key.Binding {
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
		items = append(append(items, m.replay.ShortHelp()...), m.dash.ShortHelp()...)
		items = append(items, m.lesson.keys.Toggle)
	case reading:
		items = append(items, m.live.ShortHelp()...)
	default:
		items = append(append(items, m.lesson.keys.Toggle), m.live.ShortHelp()...)
		items = append(items, m.dash.ShortHelp()...)
	}
	return append(items, m.keys.Help, m.keys.Quit)
}

// helpGroup is one titled column of the ? overlay.
type helpGroup struct {
	title string
	keys  []key.Binding
}

// helpGroups are the ? overlay's columns: the replay's or the running
// lab's keys, the dashboard's, and the lesson's, which the exercises key
// joins when there is a workspace (both open the layer below the operator).
func (m Model) helpGroups() []helpGroup {
	view := append(m.dash.FullHelp()[0], m.keys.Help, m.keys.Quit)
	reading := helpGroup{"Lesson", m.lesson.FullHelp()[0]}
	if ex := m.exercises.FullHelp(); len(ex) > 0 {
		reading = helpGroup{"Lesson & exercises", append(reading.keys, ex[0]...)}
	}
	if m.replay != nil {
		return []helpGroup{{"Replay", m.replay.FullHelp()[0]}, {"View", view}, reading}
	}
	l := m.live.FullHelp()
	return []helpGroup{{"Switches", l[0]}, {"Objects & step-through", l[1]}, {"View", view}, reading}
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
