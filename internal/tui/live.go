package tui

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/operator-lab/lab/internal/l10n"
	"github.com/operator-lab/lab/operator/switches"
)

// live drives the running lab through its Controls: the keys that flip
// the operator's switches, step through its gate and change the lab's
// objects, and the lesson's demos. A component of the root with no view
// of its own: what it does comes back as events, which the panes and the
// header show.
type live struct {
	c        *common
	f        *focus // the selected object, which u, m and d act on
	keys     liveKeys
	controls Controls // nil in a replay, and until the lab is up
	demo     *demoRun // the lesson demo under way, if any
}

// liveKeys act on the running lab.
type liveKeys struct {
	Requeue, Breaker, RateLimit, External, Backoff key.Binding
	Faster, Slower                                 key.Binding

	Create, Update, Burst, Delete key.Binding

	Pause, Step key.Binding
}

func newLive(c *common, f *focus, controls Controls) *live {
	say := c.say
	l := &live{c: c, f: f, keys: liveKeys{
		// A switch's key is named as the switch is, in the header too.
		Requeue:   bind([]string{"r"}, "r", switches.NameRequeue),
		Breaker:   bind([]string{"b"}, "b", switches.NameBreaker),
		RateLimit: bind([]string{"l"}, "l", switches.NameRateLimit),
		External:  bind([]string{"e"}, "e", switches.NameExternal),
		Backoff:   bind([]string{"o"}, "o", switches.NameBackoff),
		Faster:    bind([]string{"+", "="}, "+", say.Text("faster")),
		Slower:    bind([]string{"-", "_"}, "-", say.Text("slower")),

		// C creates an object whose spec the controller rejects: the one
		// way to its give-up branch (TerminalError), the learner's own
		// under --mine, without kubectl.
		Create: bind([]string{"c", "C"}, "c", say.Text("create")),
		Update: bind([]string{"u"}, "u", say.Text("update")),
		Burst:  bind([]string{"m"}, "m", say.Text("burst")),
		Delete: bind([]string{"d"}, "d", say.Text("delete")),

		Pause: bind([]string{"p", " "}, "p", say.Text("pause")),
		Step:  bind([]string{"s", "n"}, "s", say.Text("step")),
	}}
	l.setControls(controls)
	return l
}

// setControls takes the running lab's controls; their switches, read
// once here, say which switches the lab has (every change after this
// arrives as a switch event).
func (l *live) setControls(c Controls) {
	l.controls = c
	l.c.board = nil
	if c != nil {
		l.c.board = c.Switches()
	}
}

// switchKey is a key that moves a switch: modes go round, the timescale
// stops at its ends.
type switchKey struct {
	b    key.Binding
	name string
	dir  int
	wrap bool
}

func (k liveKeys) switchKeys() []switchKey {
	return []switchKey{
		{k.Requeue, switches.NameRequeue, 1, true},
		{k.Breaker, switches.NameBreaker, 1, true},
		{k.RateLimit, switches.NameRateLimit, 1, true},
		{k.External, switches.NameExternal, 1, true},
		{k.Backoff, switches.NameBackoff, 1, true},
		{k.Faster, switches.NameTimescale, 1, false},
		{k.Slower, switches.NameTimescale, -1, false},
	}
}

// configure enables the keys outside a replay; a switch's keys only when
// the lab has the switch.
func (l *live) configure() {
	on := !l.c.replay
	k := &l.keys
	for _, b := range []*key.Binding{&k.Create, &k.Update, &k.Burst, &k.Delete, &k.Pause, &k.Step} {
		b.SetEnabled(on)
	}
	for _, b := range []struct {
		b    *key.Binding
		name string
	}{{&k.Requeue, switches.NameRequeue}, {&k.Breaker, switches.NameBreaker}, {&k.RateLimit, switches.NameRateLimit},
		{&k.External, switches.NameExternal}, {&k.Backoff, switches.NameBackoff},
		{&k.Faster, switches.NameTimescale}, {&k.Slower, switches.NameTimescale}} {
		b.b.SetEnabled(on && l.c.hasSwitch(b.name))
	}
}

// ShortHelp is the keys a learner needs first.
func (l *live) ShortHelp() []key.Binding {
	k := l.keys
	return []key.Binding{k.Requeue, k.External, k.Create, k.Pause, k.Step, k.Update, k.Breaker}
}

// FullHelp is two columns of the ? overlay: the switches, and the
// objects with the step-through gate.
func (l *live) FullHelp() [][]key.Binding {
	k := l.keys
	return [][]key.Binding{
		{k.Requeue, k.Breaker, k.RateLimit, k.External, k.Backoff, k.Faster, k.Slower},
		{k.Create, k.Update, k.Burst, k.Delete, k.Pause, k.Step},
	}
}

// Update acts on the running lab for a key of its own; handled is false
// for any other message.
func (l *live) Update(msg tea.Msg) (cmd tea.Cmd, handled bool) {
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		return nil, false
	}
	k, say := l.keys, l.c.say
	for _, s := range k.switchKeys() {
		if key.Matches(km, s.b) {
			l.cycleSwitch(s.name, s.dir, s.wrap)
			return nil, true
		}
	}
	// The key of a switch this controller does not read is off (neither in
	// the footer nor in the help), but pressing it still gets an answer.
	for _, s := range k.switchKeys() {
		if l.controls != nil && !s.b.Enabled() && slices.Contains(s.b.Keys(), km.String()) {
			l.unavailable(km.String(), s.name)
			return nil, true
		}
	}
	switch {
	case key.Matches(km, k.Pause):
		l.togglePause()
	case key.Matches(km, k.Step):
		l.step()
	case key.Matches(km, k.Create) && km.String() == "C":
		cmd = l.notedAction(say.Text("created"), func(ctx context.Context, c Controls) (string, error) {
			return c.CreateInvalid(ctx)
		}, say.Text(", with a spec the controller must reject"))
	case key.Matches(km, k.Create):
		cmd = l.action(say.Text("created object"), func(ctx context.Context, c Controls) (string, error) {
			return c.CreateObject(ctx)
		})
	case key.Matches(km, k.Update):
		cmd = l.objectAction(say.Text("changed the spec of"), func(ctx context.Context, c Controls, key string) error {
			return c.UpdateSpec(ctx, key)
		})
	case key.Matches(km, k.Burst):
		cmd = l.objectAction(say.Text("sent 5 quick spec changes to"), func(ctx context.Context, c Controls, key string) error {
			return c.Burst(ctx, key, 5)
		})
	case key.Matches(km, k.Delete):
		cmd = l.objectAction(say.Text("deleted"), func(ctx context.Context, c Controls, key string) error {
			return c.Delete(ctx, key)
		})
	default:
		return nil, false
	}
	return cmd, true
}

// togglePause pauses or resumes the gate as the view shows it: the gate
// events, not a second copy of its state, decide which.
func (l *live) togglePause() {
	if l.controls == nil {
		return
	}
	if paused, _ := l.c.gate(); paused {
		l.controls.Resume()
		l.c.setStatus(l.c.say.Text("resumed: workers reconcile freely again"), false)
		return
	}
	l.controls.Pause()
	l.c.setStatus(l.c.say.Text("paused: each reconcile now waits at the gate — press s to let one through"), false)
}

func (l *live) step() {
	if l.controls == nil {
		return
	}
	if paused, _ := l.c.gate(); !paused {
		l.c.setStatus(l.c.say.Text("step works while paused: press p first"), true)
		return
	}
	l.controls.Step()
	l.f.pinned = 0
	l.c.setStatus(l.c.say.Text("stepped: one reconcile let through"), false)
}

// current is a switch as the controls have it now, with the options its
// key moves through: what a key acts on, which may be ahead of the
// events the view shows.
func (l *live) current(name string) (Switch, bool) {
	if l.controls == nil {
		return Switch{}, false
	}
	all := l.controls.Switches()
	i := slices.IndexFunc(all, func(s Switch) bool { return s.Name == name })
	if i < 0 {
		return Switch{}, false
	}
	return all[i], true
}

// cycleSwitch moves a switch to its next (or previous) option; wrap says
// whether to go round (modes) or stop at the ends (timescale).
func (l *live) cycleSwitch(name string, dir int, wrap bool) {
	say := l.c.say
	sw, ok := l.current(name)
	if !ok || len(sw.Options) == 0 {
		l.c.setStatus(say.Textf("this lab has no %s switch", name), true)
		return
	}
	next := slices.Index(sw.Options, sw.Value) + dir
	switch {
	case wrap:
		next = (next + len(sw.Options)) % len(sw.Options)
	case next < 0 || next >= len(sw.Options):
		at := say.Textf("%s is already at its slowest", name)
		if dir > 0 {
			at = say.Textf("%s is already at its fastest", name)
		}
		l.c.setStatus(at, false)
		return
	}
	value := sw.Options[next]
	if err := l.controls.SetSwitch(name, value); err != nil {
		l.c.setStatus(fmt.Sprintf("%s=%s: %v", name, value, err), true)
		return
	}
	l.c.noteChanged(name)
	l.c.setStatus(fmt.Sprintf("%s → %s: %s", name, value, effect(say, name, value))+l.takeOver(name), false)
}

// unavailable says why a switch key does nothing here: the switch belongs
// to another lab (the breaker in lab 3.1), or the learner's controller
// makes that choice in code (--mine).
func (l *live) unavailable(pressed, name string) {
	say := l.c.say
	if why := switches.BelongsIn(say, name, l.c.lab); why != "" {
		l.c.setStatus(say.Textf("%s does nothing here: %s", pressed, why), true)
		return
	}
	l.c.setStatus(say.Textf("%s does nothing here: this controller has no %s switch", pressed, name), true)
}

// effect says in one line what a switch's new value does to the next
// reconciles, in the words of package switches.
func effect(say l10n.Printer, name, value string) string {
	if e := switches.EffectIn(say, name, value); e != "" {
		return e
	}
	return say.Text("applies from the next reconcile")
}

func (l *live) action(what string, run func(context.Context, Controls) (string, error)) tea.Cmd {
	return l.notedAction(what, run, "")
}

// notedAction runs an object action in the background; note is said
// after the object's name when it is done.
func (l *live) notedAction(what string, run func(context.Context, Controls) (string, error), note string) tea.Cmd {
	c := l.controls
	if c == nil {
		return nil
	}
	l.c.setStatus(what+"…", false)
	ns := l.c.namespace // read here: the command runs on another goroutine
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		key, err := run(ctx, c)
		if err == nil && key != "" {
			what += " " + displayKey(ns, key)
		}
		return actionDoneMsg{what: what + note, key: key, err: err}
	}
}

func (l *live) objectAction(what string, run func(context.Context, Controls, string) error) tea.Cmd {
	o, ok := l.f.object(l.c.state)
	if !ok || o.Deleted {
		l.c.setStatus(l.c.say.Text("no object selected: press c to create one"), true)
		return nil
	}
	objectKey := o.Key
	return l.action(what+" "+l.c.displayKey(objectKey), func(ctx context.Context, c Controls) (string, error) {
		return "", run(ctx, c, objectKey)
	})
}
