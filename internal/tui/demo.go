package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

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

// runDemo shows the current section's demo on the running operator: its
// switches are set at once, then its scenario's change runs in the background.
func (m *Model) runDemo() tea.Cmd {
	section, ok := m.lesson.current()
	if !ok || section.Demo == nil || m.controls == nil || m.replay != nil {
		return nil
	}
	d := section.Demo
	if d.Lab != m.header.Lab {
		m.setStatus(fmt.Sprintf("this demo runs in lab %s: lab start %s", d.Lab, d.Lab), true)
		return nil
	}
	var scen *scenario.Scenario
	if d.Scenario != "" {
		s, err := scenario.Get(d.Lab, d.Scenario)
		if err != nil {
			m.setStatus(fmt.Sprintf("the live view cannot run scenario %q: try lab %s", d.Scenario, strings.Join(d.RunArgs(), " ")), true)
			return nil
		}
		scen = &s
	}
	var applied []string
	set := func(name, value string) bool {
		if err := m.controls.SetSwitch(name, value); err != nil {
			m.setStatus(fmt.Sprintf("demo: %s=%s: %v", name, value, err), true)
			return false
		}
		applied = append(applied, name+"="+value)
		m.changed, m.changedAt = name, m.clock()
		return true
	}
	defer m.refreshControls()
	for _, sw := range d.Switches {
		if !set(sw.Name, sw.Value) {
			return nil
		}
	}
	m.refreshControls() // the outage below is timed at the timescale just set
	m.outage = nil      // a new demo replaces the one running
	outcome := ""
	if scen != nil && scen.External != "" {
		if !set(switchExternal, string(scen.External)) {
			return nil
		}
		wait := m.scaled(scen.Recover)
		m.outage = &outage{until: m.clock().Add(wait), from: string(scen.External)}
		outcome = fmt.Sprintf("; external healthy again in %s", formatDuration(wait.Round(100*time.Millisecond)))
	}
	if m.paused {
		outcome += " (paused: s lets a reconcile through)"
	}
	what := "demo " + section.ID
	if len(applied) > 0 {
		what += ": " + strings.Join(applied, ", ")
	}
	if scen == nil {
		m.setStatus(what+outcome, false)
		return nil
	}
	target := ""
	if o, ok := m.selectedObject(); ok && scen.Target && !o.Deleted {
		target = o.Key
	}
	s := *scen
	return m.notedAction(what+"; "+s.Did, func(ctx context.Context, c Controls) (string, error) {
		return s.Live(ctx, controlObjects{c}, target)
	}, outcome)
}

// scaled is an operator delay in real time at the current timescale, read
// the way the operator reads it.
func (m Model) scaled(d time.Duration) time.Duration {
	sw, ok := m.switchByName(switchTimescale)
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
func (m *Model) endOutage() {
	o := m.outage
	if o == nil || m.controls == nil || m.clock().Before(o.until) {
		return
	}
	m.outage = nil
	if sw, ok := m.switchByName(switchExternal); !ok || sw.Value != o.from {
		return // changed by hand since: leave it
	}
	healthy := string(switches.ExternalHealthy)
	if err := m.controls.SetSwitch(switchExternal, healthy); err != nil {
		m.setStatus(fmt.Sprintf("demo: external=%s: %v", healthy, err), true)
		return
	}
	m.changed, m.changedAt = switchExternal, m.clock()
	m.setStatus("demo: the external system is healthy again — watch the next retry succeed", false)
	m.refreshControls()
}
