package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/operator-lab/lab/content"
	"github.com/operator-lab/lab/internal/l10n"
	"github.com/operator-lab/lab/internal/tui/state"
	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator/api/v1alpha1"
	"github.com/operator-lab/lab/operator/scenario"
	"github.com/operator-lab/lab/operator/switches"
)

// demoRun is a lesson demo under way on the running lab. It set every
// switch its section's demo declares (content.Demo.Settings: the ones it is
// about and the ones its lesson assumes), whatever the learner had left
// on, and may have broken the external system for a while. It keeps the
// learner's own values of those switches and puts them back when it ends,
// when another demo replaces it, or when the learner stops it (w again).
type demoRun struct {
	section string // the section's ID
	// yours are the learner's values of the switches the demo set, in the
	// order it set them. A switch the learner moves meanwhile is dropped:
	// it is theirs again, and the demo leaves it alone.
	yours []content.Switch
	// put is what the demo (or its outage's end) last put in each switch
	// of yours; a switch that no longer has it was changed by someone else.
	put map[string]string
	// outage is the external system's recovery still to come, if any.
	outage *outage

	// The demo is over once its scenario's change is made (acted), its
	// outage has ended, and the object the change named (key) has come to
	// rest: reconciled since the demo began (more than seen reconciles),
	// Ready, gone or failed for good, and then with nothing to do for
	// settleFor: no queue item, no reconcile running, no new reconcile
	// (quiet, counted from quietAt reconciles).
	acted   bool
	key     string
	seen    int
	quiet   time.Time
	quietAt int
}

// outage is the end of an outage demo's outage: the external system is
// healthy again at until. The view times it on its own clock (not the
// scenario's headless pause), so it ends on a tick of the view, and the
// learner can take the switch back by hand meanwhile.
type outage struct{ until time.Time }

// settleFor is how long the demo's object must have nothing to do before
// the demo counts as over: between one reconcile and the watch event that
// brings the next, the queue is empty for a moment.
const settleFor = time.Second

// demoActedMsg reports that a demo's scenario made its change.
type demoActedMsg struct {
	run  *demoRun
	what string // what the status line says of it, before the object's name
	note string // said after the object's name
	key  string
	err  error
}

// controlObjects lets a scenario change the live lab's objects through
// Controls. Names are left to the lab, which numbers its objects: the
// learner's session already has some, and a scenario's fixed names would
// collide with them.
type controlObjects struct{ c Controls }

func (o controlObjects) Create(ctx context.Context, _ string, invalid bool) (string, error) {
	if invalid {
		return o.c.CreateInvalid(ctx)
	}
	return o.c.CreateObject(ctx)
}

func (o controlObjects) Update(ctx context.Context, key string, n int) error {
	return o.c.Burst(ctx, key, n)
}

func (o controlObjects) Delete(ctx context.Context, key string) error { return o.c.Delete(ctx, key) }

// otherLabDemo says where a demo of another lab runs (the lesson pane's
// demo line, and the status line when w is pressed on it).
func otherLabDemo(say l10n.Printer, lab string) string {
	return say.Textf("this demo runs in lab %s: lab start %s", lab, lab)
}

// runDemo shows a lesson section's demo on the running operator (of lab):
// its switches are set at once, then its scenario's change runs in the
// background. w on the section whose demo is running stops it.
func (l *live) runDemo(section content.Section, lab string) tea.Cmd {
	d := section.Demo
	if d == nil || l.controls == nil || l.c.replay {
		return nil
	}
	if d.Lab != lab {
		l.c.setStatus(otherLabDemo(l.c.say, d.Lab), true)
		return nil
	}
	if l.demo != nil && l.demo.section == section.ID {
		l.endDemo(l.c.say.Text("stopped"), false)
		return nil
	}
	name := l.c.say.Textf("demo %s", section.ID)
	var scen *scenario.Scenario
	if d.Scenario != "" {
		s, err := scenario.Get(d.Lab, d.Scenario)
		if err != nil {
			l.c.setStatus(l.c.say.Textf("the live view cannot run scenario %q: try lab %s", d.Scenario, strings.Join(d.RunArgs(), " ")), true)
			return nil
		}
		scen = &s
	}
	plan, missing := l.demoPlan(d, scen)
	if missing != "" {
		l.c.setStatus(name+" "+l.c.say.Textf("needs the %s switch, which the running controller does not have", missing), true)
		return nil
	}

	var parts []string
	prev := l.demo
	run := &demoRun{section: section.ID, put: map[string]string{}}
	if prev != nil {
		// The learner's values stay those from before the first demo, and
		// what the previous demo set that this one does not goes back now.
		parts = append(parts, l.c.say.Textf("replaces demo %s", prev.section))
		planned := map[string]bool{}
		for _, p := range plan {
			planned[p.Name] = true
		}
		for _, y := range prev.yours {
			if planned[y.Name] {
				run.yours = append(run.yours, y)
			}
		}
		if back := l.putBack(prev, planned); len(back) > 0 {
			parts = append(parts, l.c.say.Textf("put back your %s", strings.Join(back, ", ")))
		}
		l.demo = nil
	}
	for _, p := range plan {
		if slices.ContainsFunc(run.yours, func(y content.Switch) bool { return y.Name == p.Name }) {
			continue
		}
		sw, _ := l.current(p.Name)
		run.yours = append(run.yours, content.Switch{Name: p.Name, Value: sw.Value})
	}
	l.demo = run
	var set []string
	for _, p := range plan {
		sw, _ := l.current(p.Name)
		run.put[p.Name] = p.Value
		if sw.Value == p.Value {
			continue
		}
		if err := l.controls.SetSwitch(p.Name, p.Value); err != nil {
			delete(run.put, p.Name)
			l.endDemo(l.c.say.Textf("failed: %v", fmt.Errorf("%s=%s: %w", p.Name, p.Value, err)), true)
			return nil
		}
		set = append(set, p.Name+"="+p.Value)
		l.c.noteChanged(p.Name)
	}
	if len(set) > 0 {
		parts = append(parts, l.c.say.Textf("set %s", strings.Join(set, ", ")))
	} else {
		parts = append(parts, l.c.say.Text("the switches were already as the lesson has them"))
	}
	note := ""
	if scen != nil && scen.External != "" {
		wait := l.scaled(scen.Recover) // at the timescale the demo just set
		run.outage = &outage{until: l.c.clock().Add(wait)}
		note = "; " + l.c.say.Textf("external healthy again in %s", formatDuration(wait.Round(100*time.Millisecond)))
	}
	if paused, _ := l.c.gate(); paused {
		note += " (" + l.c.say.Text("paused: s lets a reconcile through") + ")"
	}
	what := name + ": " + strings.Join(parts, "; ")
	if scen == nil {
		run.acted = true
		l.c.setStatus(what+note, false)
		return nil
	}
	target := ""
	if o, ok := l.f.object(l.c.state); ok && scen.Target && !o.Deleted {
		target = o.Key
		run.seen = o.Reconciles
	}
	s, c, ns := *scen, l.controls, l.c.namespace
	what += "; " + l.c.say.Text(s.Did)
	l.c.setStatus(what+"…", false)
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		key, err := s.Live(ctx, controlObjects{c}, target)
		msg := demoActedMsg{run: run, what: what, note: note, key: key, err: err}
		if err == nil && key != "" {
			msg.what += " " + displayKey(ns, key)
		}
		return msg
	}
}

// demoPlan is every switch the demo sets, in order, with the external
// system's state for its scenario's outage last. An assumed switch the
// lab does not have, or not with that value, is left out (a learner's
// controller makes those choices in its code, and its world names its own
// states); missing names a switch the demo is about that the lab does not
// have.
func (l *live) demoPlan(d *content.Demo, scen *scenario.Scenario) (plan []content.Switch, missing string) {
	own := len(d.Switches)
	for i, s := range d.Settings() {
		sw, has := l.current(s.Name)
		switch {
		case scen != nil && scen.External != "" && s.Name == switches.NameExternal:
			continue // the outage sets it
		case i >= own && (!has || !slices.Contains(sw.Options, s.Value)):
			continue
		case !has:
			return nil, s.Name
		}
		plan = append(plan, s)
	}
	if scen != nil && scen.External != "" {
		if _, has := l.current(switches.NameExternal); !has {
			return nil, switches.NameExternal
		}
		plan = append(plan, content.Switch{Name: switches.NameExternal, Value: string(scen.External)})
	}
	return plan, ""
}

// demoActed takes the news that a demo's change is made: the object it
// named is selected, and the demo waits for it to settle. A failed change
// ends the demo.
func (l *live) demoActed(msg demoActedMsg) {
	run := msg.run
	if msg.err != nil {
		l.c.setStatus(fmt.Sprintf("%s: %v", msg.what, msg.err), true)
		if l.demo == run {
			l.endDemo(l.c.say.Textf("failed: %v", msg.err), true)
		}
		return
	}
	if msg.key != "" {
		l.f.selected = msg.key
	}
	l.c.setStatus(msg.what+msg.note+" — "+l.c.say.Text("watch the sequence pane"), false)
	if run.key != msg.key {
		run.seen = 0 // an object the demo made: every reconcile of it counts
	}
	run.key, run.acted = msg.key, true
}

// tickDemo moves the demo under way on with the live view's clock: it
// ends its outage when the time comes, and the demo itself once its object
// has settled.
func (l *live) tickDemo() {
	d := l.demo
	if d == nil || l.controls == nil {
		return
	}
	now := l.c.clock()
	if d.outage != nil {
		if now.Before(d.outage.until) {
			return
		}
		l.endOutage(d)
		return
	}
	if d.acted && l.settled(d, now) {
		l.endDemo(l.c.say.Text("over"), false)
	}
}

// settled reports whether the demo's object has come to rest since the
// demo began (see demoRun). A demo without a scenario never settles: it
// lasts until stopped or replaced.
func (l *live) settled(d *demoRun, now time.Time) bool {
	if d.key == "" {
		return false
	}
	o, ok := l.c.state.Object(d.key)
	if !ok || o.Reconciles <= d.seen {
		return false
	}
	_, queued := l.c.state.QueueItem(d.key)
	resting := o.Deleted || o.LastResult == observe.ResultTerminal || ready(o)
	if queued || !resting || o.Reconciles != d.quietAt || d.quiet.IsZero() {
		d.quietAt, d.quiet = o.Reconciles, time.Time{}
		if !queued && resting {
			d.quiet = now
		}
		return false
	}
	return now.Sub(d.quiet) >= settleFor
}

// ready reports whether the object's Ready condition is True.
func ready(o *state.Object) bool {
	for _, c := range o.Conditions {
		if c.Type == v1alpha1.ConditionReady {
			return c.Status == string(metav1.ConditionTrue)
		}
	}
	return false
}

// endOutage brings the external system back once the demo's outage is
// over, unless the learner changed it meanwhile (it is theirs then).
func (l *live) endOutage(d *demoRun) {
	d.outage = nil
	sw, ok := l.current(switches.NameExternal)
	if !ok || sw.Value != d.put[switches.NameExternal] {
		d.drop(switches.NameExternal)
		return
	}
	healthy := string(switches.ExternalHealthy)
	if err := l.controls.SetSwitch(switches.NameExternal, healthy); err != nil {
		l.c.setStatus(l.c.say.Textf("demo %s", d.section)+": external="+healthy+": "+err.Error(), true)
		return
	}
	d.put[switches.NameExternal] = healthy
	l.c.noteChanged(switches.NameExternal)
	l.c.setStatus(l.c.say.Textf("demo %s", d.section)+": "+l.c.say.Text("the external system is healthy again — watch the next retry succeed"), false)
}

// endDemo ends the demo under way (why: over, stopped, failed; bad for a
// failure) and puts the learner's switches back, saying which.
func (l *live) endDemo(why string, bad bool) {
	d := l.demo
	if d == nil {
		return
	}
	l.demo = nil
	msg := l.c.say.Textf("demo %s", d.section) + " " + why
	if back := l.putBack(d, nil); len(back) > 0 {
		msg += ": " + l.c.say.Textf("put back your %s", strings.Join(back, ", "))
	} else {
		msg += ": " + l.c.say.Text("your switches are as they were")
	}
	l.c.setStatus(msg, bad)
}

// putBack gives every switch the demo set, except those in keep, the
// learner's value again, where the demo's value is still there; it
// returns the switches it changed, as name=value.
func (l *live) putBack(d *demoRun, keep map[string]bool) []string {
	var back []string
	for _, y := range d.yours {
		sw, ok := l.current(y.Name)
		if keep[y.Name] || !ok || sw.Value != d.put[y.Name] || sw.Value == y.Value {
			continue
		}
		if err := l.controls.SetSwitch(y.Name, y.Value); err != nil {
			l.c.setStatus(fmt.Sprintf("%s=%s: %v", y.Name, y.Value, err), true)
			continue
		}
		l.c.noteChanged(y.Name)
		back = append(back, y.Name+"="+y.Value)
	}
	return back
}

// takeOver is called when the learner moves a switch by hand: if the demo
// under way set it, it is theirs now (and an outage of the external system
// no longer ends by itself). It returns what to add to the status line.
func (l *live) takeOver(name string) string {
	d := l.demo
	if d == nil || !d.drop(name) {
		return ""
	}
	if name == switches.NameExternal {
		d.outage = nil
	}
	return " (" + l.c.say.Text("yours now: the demo leaves it") + ")"
}

// drop forgets the learner's value of a switch; it reports whether the
// demo had set it.
func (d *demoRun) drop(name string) bool {
	i := slices.IndexFunc(d.yours, func(y content.Switch) bool { return y.Name == name })
	if i < 0 {
		return false
	}
	d.yours = slices.Delete(d.yours, i, i+1)
	delete(d.put, name)
	return true
}

// runningDemo is what the lesson pane says of the demo under way: the
// section it belongs to ("" when none) and a line about it.
func (l *live) runningDemo() (section, note string) {
	d := l.demo
	if d == nil {
		return "", ""
	}
	parts := []string{l.c.say.Text("demo running")}
	switch {
	case d.outage != nil:
		left := max(d.outage.until.Sub(l.c.clock()), 0)
		parts = append(parts, l.c.say.Textf("external healthy again in %s", formatDuration(left.Round(100*time.Millisecond))))
	case d.key != "":
		parts = append(parts, l.c.say.Textf("ends once %s is Ready, gone or failed for good", l.c.displayKey(d.key)))
	}
	return d.section, strings.Join(append(parts, l.c.say.Text("w stops it; your switches come back when it ends")), " · ")
}

// scaled is an operator delay in real time at the current timescale, read
// from the controls the way the operator reads it.
func (l *live) scaled(d time.Duration) time.Duration {
	sw, ok := l.current(switches.NameTimescale)
	if !ok {
		return d
	}
	values := switches.New(nil)
	if err := values.Set(switches.NameTimescale, sw.Value); err != nil {
		return d
	}
	return values.Scale(d)
}
