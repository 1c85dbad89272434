package tui

import "github.com/charmbracelet/bubbles/key"

// Switch names the keys change; they match the operator's switches.
const (
	switchRequeue   = "requeue"
	switchBreaker   = "breaker"
	switchRateLimit = "ratelimit"
	switchExternal  = "external"
	switchBackoff   = "backoff"
	switchTimescale = "timescale"
)

// KeyMap lists every key. Bindings that do not apply (a switch this lab does
// not have, live controls during a replay) are disabled, which also hides
// them from the help.
type KeyMap struct {
	Requeue, Breaker, RateLimit, External, Backoff key.Binding
	Faster, Slower                                 key.Binding

	Create, Update, Burst, Delete key.Binding

	Pause, Step key.Binding

	NextPane, PrevPane     key.Binding
	Up, Down               key.Binding
	PrevRecon, NextRecon   key.Binding
	Follow                 key.Binding
	PrevEvent, NextEvent   key.Binding
	First, Last, Play      key.Binding
	Help, Quit, CloseLayer key.Binding

	// The lesson pane: open/close, sections, scrolling, and the key that
	// shows the current section's demo on the running operator.
	Lesson                   key.Binding
	PrevSection, NextSection key.Binding
	ScrollUp, ScrollDown     key.Binding
	PageUp, PageDown         key.Binding
	Demo                     key.Binding

	// Exercises opens the learner's workspace progress.
	Exercises key.Binding
}

// DefaultKeyMap is the live key map.
func DefaultKeyMap() KeyMap {
	b := func(keys []string, helpKey, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(helpKey, desc))
	}
	return KeyMap{
		Requeue:   b([]string{"r"}, "r", "requeue"),
		Breaker:   b([]string{"b"}, "b", "breaker"),
		RateLimit: b([]string{"l"}, "l", "limiter"),
		External:  b([]string{"e"}, "e", "external"),
		Backoff:   b([]string{"o"}, "o", "backoff"),
		Faster:    b([]string{"+", "="}, "+", "faster"),
		Slower:    b([]string{"-", "_"}, "-", "slower"),

		Create: b([]string{"c"}, "c", "create"),
		Update: b([]string{"u"}, "u", "update"),
		Burst:  b([]string{"m"}, "m", "burst"),
		Delete: b([]string{"d"}, "d", "delete"),

		Pause: b([]string{"p", " "}, "p", "pause"),
		Step:  b([]string{"s", "n"}, "s", "step"),

		NextPane:  b([]string{"tab"}, "tab", "pane"),
		PrevPane:  b([]string{"shift+tab"}, "shift+tab", "pane back"),
		Up:        b([]string{"up", "k"}, "↑/k", "select"),
		Down:      b([]string{"down", "j"}, "↓/j", "select"),
		PrevRecon: b([]string{"["}, "[", "older"),
		NextRecon: b([]string{"]"}, "]", "newer"),
		Follow:    b([]string{"f", "end"}, "f", "follow"),
		PrevEvent: b([]string{"left", "h"}, "←", "prev event"),
		NextEvent: b([]string{"right", "l"}, "→", "next event"),
		First:     b([]string{"home", "g"}, "g", "start"),
		Last:      b([]string{"G", "end"}, "G", "end"),
		Play:      b([]string{"p", " "}, "space", "play"),

		Lesson:      b([]string{"L"}, "L", "lesson"),
		PrevSection: b([]string{"<", ","}, "<", "prev section"),
		NextSection: b([]string{">", "."}, ">", "next section"),
		ScrollUp:    b([]string{"up", "k"}, "↑/k", "scroll up"),
		ScrollDown:  b([]string{"down", "j"}, "↓/j", "scroll down"),
		PageUp:      b([]string{"pgup"}, "pgup", "page up"),
		PageDown:    b([]string{"pgdown"}, "pgdn", "page down"),
		Demo:        b([]string{"w"}, "w", "see this"),

		Exercises: b([]string{"x"}, "x", "exercises"),

		Help:       b([]string{"?"}, "?", "all keys"),
		Quit:       b([]string{"q", "ctrl+c"}, "q", "quit"),
		CloseLayer: b([]string{"esc"}, "esc", "close"),
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

// keyMode is what decides which bindings apply.
type keyMode struct {
	replay bool
	tabs   bool // panes share a slot, so tab switches between them
	// lesson: a lesson can be shown; lessonOpen: it is; demo: the section
	// shown has a demo this (live) lab can run.
	lesson, lessonOpen, demo bool
	// exercises: a workspace is known; exercisesOpen: its layer is shown.
	exercises, exercisesOpen bool
}

// configure enables the bindings that apply in a mode.
func (k *KeyMap) configure(mode keyMode, has func(name string) bool) {
	replay, tabs, reading := mode.replay, mode.tabs, mode.lessonOpen
	live := !replay
	for _, s := range []struct {
		b  *key.Binding
		on bool
	}{
		{&k.Requeue, live && has(switchRequeue)},
		{&k.Breaker, live && has(switchBreaker)},
		{&k.RateLimit, live && has(switchRateLimit)},
		{&k.External, live && has(switchExternal)},
		{&k.Backoff, live && has(switchBackoff)},
		{&k.Faster, live && has(switchTimescale)},
		{&k.Slower, live && has(switchTimescale)},
		{&k.Create, live}, {&k.Update, live}, {&k.Burst, live}, {&k.Delete, live},
		{&k.Pause, live}, {&k.Step, live},
		{&k.Follow, live},
		{&k.NextPane, tabs}, {&k.PrevPane, tabs},
		// While the lesson is open the arrows scroll it: the object list
		// they select in is not on screen then.
		{&k.Up, !reading}, {&k.Down, !reading},
		{&k.Lesson, mode.lesson},
		{&k.PrevSection, reading}, {&k.NextSection, reading},
		{&k.ScrollUp, reading}, {&k.ScrollDown, reading},
		{&k.PageUp, reading}, {&k.PageDown, reading},
		{&k.Demo, live && reading && mode.demo},
		// Live without a workspace, x still answers: it says there is none.
		{&k.Exercises, live || mode.exercises},
		{&k.PrevEvent, replay}, {&k.NextEvent, replay},
		{&k.First, replay}, {&k.Last, replay}, {&k.Play, replay},
	} {
		s.b.SetEnabled(s.on)
	}
	// [ and ] browse history live, and move the replay cursor in a replay.
	if replay {
		k.PrevRecon.SetHelp("[", "prev reconcile")
		k.NextRecon.SetHelp("]", "next reconcile")
	} else {
		k.PrevRecon.SetHelp("[", "older")
		k.NextRecon.SetHelp("]", "newer")
	}
	if reading {
		k.Lesson.SetHelp("L", "close lesson")
	} else {
		k.Lesson.SetHelp("L", "lesson")
	}
	if mode.exercisesOpen {
		k.Exercises.SetHelp("x", "close exercises")
	} else {
		k.Exercises.SetHelp("x", "exercises")
	}
}

// helpView adapts the key map to bubbles/help for one mode.
type helpView struct {
	k       KeyMap
	replay  bool
	reading bool // the lesson pane is open
	// exercises: a workspace is known, so its key is worth a place in the
	// help (without one it only says so).
	exercises bool
}

// ShortHelp is the one-line help: the keys a learner needs first.
func (h helpView) ShortHelp() []key.Binding {
	k := h.k
	// The keys of what is open to read come first.
	var lead []key.Binding
	if h.reading {
		// Pairs of keys read better as one entry in a single line.
		lead = []key.Binding{k.Demo, helpOnly(k.NextSection, "< >", "sections"), helpOnly(k.ScrollDown, "↑/↓", "scroll"), k.Lesson}
	}
	if h.exercises {
		lead = append(lead, k.Exercises)
	}
	switch {
	case h.replay && h.reading:
		return append(lead, k.NextEvent, k.PrevEvent, k.NextRecon, k.PrevRecon, k.Play, k.Help, k.Quit)
	case h.replay:
		return append(lead, k.NextEvent, k.PrevEvent, k.NextRecon, k.PrevRecon, k.Play, k.NextPane, k.Lesson, k.Help, k.Quit)
	case h.reading:
		return append(lead, k.Requeue, k.External, k.Create, k.Pause, k.Step, k.Help, k.Quit)
	}
	return append(lead, k.Lesson, k.Requeue, k.External, k.Create, k.Pause, k.Step, k.Update, k.Breaker, k.NextPane, k.PrevRecon, k.NextRecon, k.Help, k.Quit)
}

// helpOnly is b shown under another key label: one help entry for a pair
// of bindings. It keeps b's keys, so it is enabled exactly when b is.
func helpOnly(b key.Binding, keys, desc string) key.Binding {
	b.SetHelp(keys, desc)
	return b
}

// FullHelp is the ? overlay, one column per group. With a workspace, x
// joins the lesson's group: both open the layer below the operator.
func (h helpView) FullHelp() [][]key.Binding {
	k := h.k
	lesson := []key.Binding{k.Lesson, k.Demo, k.PrevSection, k.NextSection, k.ScrollUp, k.ScrollDown, k.PageUp, k.PageDown}
	if h.exercises {
		lesson = append(lesson, k.Exercises)
	}
	if h.replay {
		return [][]key.Binding{
			{k.NextEvent, k.PrevEvent, k.NextRecon, k.PrevRecon, k.First, k.Last, k.Play},
			{k.NextPane, k.PrevPane, k.Up, k.Down, k.Help, k.Quit},
			lesson,
		}
	}
	view := []key.Binding{k.NextPane, k.PrevPane, k.Up, k.Down, k.PrevRecon, k.NextRecon, k.Follow, k.Help, k.Quit}
	return [][]key.Binding{
		{k.Requeue, k.Breaker, k.RateLimit, k.External, k.Backoff, k.Faster, k.Slower},
		{k.Create, k.Update, k.Burst, k.Delete, k.Pause, k.Step},
		view,
		lesson,
	}
}
