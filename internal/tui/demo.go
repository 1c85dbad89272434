package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/operator-lab/lab/content"
	"github.com/operator-lab/lab/operator/scenario"
	"github.com/operator-lab/lab/operator/switches"
)

// outage is an outage demo under way: the external system is healthy
// again at until, unless the learner changed it meanwhile. The view times
// it on its own clock (not the scenario's headless pause), so it ends on a
// tick of the view and a change by hand can cancel it.
type outage struct {
	until time.Time
	from  string // the broken state the demo left it in
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

// runDemo shows a lesson section's demo on the running operator (of lab):
// its switches are set at once, then its scenario's change runs in the
// background.
func (l *live) runDemo(section content.Section, lab string) tea.Cmd {
	d := section.Demo
	if d == nil || l.controls == nil || l.c.replay {
		return nil
	}
	if d.Lab != lab {
		l.c.setStatus(fmt.Sprintf("this demo runs in lab %s: lab start %s", d.Lab, d.Lab), true)
		return nil
	}
	var scen *scenario.Scenario
	if d.Scenario != "" {
		s, err := scenario.Get(d.Lab, d.Scenario)
		if err != nil {
			l.c.setStatus(fmt.Sprintf("the live view cannot run scenario %q: try lab %s", d.Scenario, strings.Join(d.RunArgs(), " ")), true)
			return nil
		}
		scen = &s
	}
	var applied []string
	set := func(name, value string) bool {
		if err := l.controls.SetSwitch(name, value); err != nil {
			l.c.setStatus(fmt.Sprintf("demo: %s=%s: %v", name, value, err), true)
			return false
		}
		applied = append(applied, name+"="+value)
		l.c.noteChanged(name)
		return true
	}
	for _, sw := range d.Switches {
		if !set(sw.Name, sw.Value) {
			return nil
		}
	}
	l.outage = nil // a new demo replaces the one running
	outcome := ""
	if scen != nil && scen.External != "" {
		if !set(switches.NameExternal, string(scen.External)) {
			return nil
		}
		wait := l.scaled(scen.Recover) // at the timescale the demo just set
		l.outage = &outage{until: l.c.clock().Add(wait), from: string(scen.External)}
		outcome = fmt.Sprintf("; external healthy again in %s", formatDuration(wait.Round(100*time.Millisecond)))
	}
	if paused, _ := l.c.gate(); paused {
		outcome += " (paused: s lets a reconcile through)"
	}
	what := "demo " + section.ID
	if len(applied) > 0 {
		what += ": " + strings.Join(applied, ", ")
	}
	if scen == nil {
		l.c.setStatus(what+outcome, false)
		return nil
	}
	target := ""
	if o, ok := l.f.object(l.c.state); ok && scen.Target && !o.Deleted {
		target = o.Key
	}
	s := *scen
	return l.notedAction(what+"; "+s.Did, func(ctx context.Context, c Controls) (string, error) {
		return s.Live(ctx, controlObjects{c}, target)
	}, outcome)
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

// endOutage brings the external system back once an outage demo is over
// (checked on every tick of the live view's clock).
func (l *live) endOutage() {
	o := l.outage
	if o == nil || l.controls == nil || l.c.clock().Before(o.until) {
		return
	}
	l.outage = nil
	if sw, ok := l.current(switches.NameExternal); !ok || sw.Value != o.from {
		return // changed by hand since: leave it
	}
	healthy := string(switches.ExternalHealthy)
	if err := l.controls.SetSwitch(switches.NameExternal, healthy); err != nil {
		l.c.setStatus(fmt.Sprintf("demo: external=%s: %v", healthy, err), true)
		return
	}
	l.c.noteChanged(switches.NameExternal)
	l.c.setStatus("demo: the external system is healthy again — watch the next retry succeed", false)
}
