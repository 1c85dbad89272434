package tui

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// demoOutage is how long an outage demo keeps the external system broken
// before it is healthy again, in operator time (divided by the timescale),
// as `lab run`'s outage scenarios do: long enough for several retries.
const demoOutage = 30 * time.Second

// externalHealthy is the value the external switch returns to after an outage demo.
const externalHealthy = "healthy"

// demoStep is what a lesson demo's scenario becomes in the live view: the
// same kind of change to the lab, made through Controls. (The `lab run`
// scenarios themselves create objects with fixed names in a namespace of
// their own; here the learner's session already has objects.)
type demoStep struct {
	// external, when set, is the state the external system is put in
	// first; it is healthy again after demoOutage.
	external string
	// target says the step acts on an existing object: the selected one,
	// or a new one when there is none.
	target bool
	// what the status line says was done, before the object's name.
	what string
	run  func(ctx context.Context, c Controls, target string) (key string, err error)
}

func createOne(ctx context.Context, c Controls, _ string) (string, error) { return c.CreateObject(ctx) }

// demoSteps maps each scenario a lesson demo names to its live step.
var demoSteps = map[string]demoStep{
	"create": {what: "created", run: createOne},
	"update-burst": {target: true, what: "sent 5 quick spec changes to", run: func(ctx context.Context, c Controls, key string) (string, error) {
		return key, c.Burst(ctx, key, 5)
	}},
	"delete": {target: true, what: "deleted", run: func(ctx context.Context, c Controls, key string) (string, error) {
		return key, c.Delete(ctx, key)
	}},
	"not-found": {what: "created and at once deleted", run: func(ctx context.Context, c Controls, _ string) (string, error) {
		key, err := c.CreateObject(ctx)
		if err != nil {
			return "", err
		}
		return key, c.Delete(ctx, key)
	}},
	"external-outage": {external: "down", what: "created", run: createOne},
	"flaky-external": {external: "flaky", what: "created 3 objects, the last", run: func(ctx context.Context, c Controls, _ string) (key string, err error) {
		for i := 0; i < 3 && err == nil; i++ {
			key, err = c.CreateObject(ctx)
		}
		return key, err
	}},
	"permanent-error": {what: "created with an invalid spec:", run: func(ctx context.Context, c Controls, _ string) (string, error) {
		return c.CreateInvalid(ctx)
	}},
}

// outage is an outage demo under way: the external system is healthy
// again at until, unless the learner changed it meanwhile.
type outage struct {
	until time.Time
	from  string // the broken state the demo left it in
}

// runDemo shows the current section's demo on the running operator: its
// switches are set at once, then its scenario's step runs in the background.
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
	step, known := demoSteps[d.Scenario]
	if d.Scenario != "" && !known {
		m.setStatus(fmt.Sprintf("the live view cannot run scenario %q: try lab %s", d.Scenario, strings.Join(d.RunArgs(), " ")), true)
		return nil
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
	if step.external != "" {
		if !set(switchExternal, step.external) {
			return nil
		}
		wait := m.scaled(demoOutage)
		m.outage = &outage{until: m.clock().Add(wait), from: step.external}
		outcome = fmt.Sprintf("; external healthy again in %s", formatDuration(wait.Round(100*time.Millisecond)))
	}
	if m.paused {
		outcome += " (paused: s lets a reconcile through)"
	}
	what := "demo " + section.ID
	if len(applied) > 0 {
		what += ": " + strings.Join(applied, ", ")
	}
	if step.run == nil {
		m.setStatus(what+outcome, false)
		return nil
	}
	target := ""
	if o, ok := m.selectedObject(); ok && step.target && !o.Deleted {
		target = o.Key
	}
	run := step.run
	return m.notedAction(what+"; "+step.what, func(ctx context.Context, c Controls) (string, error) {
		key := target
		if step.target && key == "" {
			var err error
			if key, err = c.CreateObject(ctx); err != nil {
				return "", err
			}
		}
		return run(ctx, c, key)
	}, outcome)
}

// scaled is an operator delay in real time at the current timescale.
func (m Model) scaled(d time.Duration) time.Duration {
	if sw, ok := m.switchByName(switchTimescale); ok {
		if f, err := strconv.ParseFloat(sw.Value, 64); err == nil && f > 0 {
			return time.Duration(float64(d) / f)
		}
	}
	return d
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
	if err := m.controls.SetSwitch(switchExternal, externalHealthy); err != nil {
		m.setStatus(fmt.Sprintf("demo: external=%s: %v", externalHealthy, err), true)
		return
	}
	m.changed, m.changedAt = switchExternal, m.clock()
	m.setStatus("demo: the external system is healthy again — watch the next retry succeed", false)
	m.refreshControls()
}
