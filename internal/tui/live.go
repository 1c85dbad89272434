package tui

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// switchKey is a key that moves a switch: modes go round, the timescale
// stops at its ends.
type switchKey struct {
	b    key.Binding
	name string
	dir  int
	wrap bool
}

func (k KeyMap) switchKeys() []switchKey {
	return []switchKey{
		{k.Requeue, switchRequeue, 1, true},
		{k.Breaker, switchBreaker, 1, true},
		{k.RateLimit, switchRateLimit, 1, true},
		{k.External, switchExternal, 1, true},
		{k.Backoff, switchBackoff, 1, true},
		{k.Faster, switchTimescale, 1, false},
		{k.Slower, switchTimescale, -1, false},
	}
}

// onLiveKey handles the keys that act on the running lab.
func (m Model) onLiveKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k := m.keys
	for _, s := range k.switchKeys() {
		if key.Matches(msg, s.b) {
			m.cycleSwitch(s.name, s.dir, s.wrap)
			return m, nil
		}
	}
	switch {
	case key.Matches(msg, k.Pause):
		if m.controls == nil {
			break
		}
		if m.controls.Paused() {
			m.controls.Resume()
			m.setStatus("resumed: workers reconcile freely again", false)
		} else {
			m.controls.Pause()
			m.setStatus("paused: each reconcile now waits at the gate — press s to let one through", false)
		}
		m.refreshControls()
	case key.Matches(msg, k.Step):
		if m.controls == nil {
			break
		}
		if !m.controls.Paused() {
			m.setStatus("step works while paused: press p first", true)
			break
		}
		m.controls.Step()
		m.pinned = 0
		m.setStatus("stepped: one reconcile let through", false)
		m.refreshControls()
	case key.Matches(msg, k.Create):
		return m, m.action("created object", func(ctx context.Context, c Controls) (string, error) {
			return c.CreateObject(ctx)
		})
	case key.Matches(msg, k.Update):
		return m, m.objectAction("changed the spec of", func(ctx context.Context, c Controls, key string) error {
			return c.UpdateSpec(ctx, key)
		})
	case key.Matches(msg, k.Burst):
		return m, m.objectAction("sent 5 quick spec changes to", func(ctx context.Context, c Controls, key string) error {
			return c.Burst(ctx, key, 5)
		})
	case key.Matches(msg, k.Delete):
		return m, m.objectAction("deleted", func(ctx context.Context, c Controls, key string) error {
			return c.Delete(ctx, key)
		})
	}
	return m, nil
}

// cycleSwitch moves a switch to its next (or previous) option; wrap says
// whether to go round (modes) or stop at the ends (timescale).
func (m *Model) cycleSwitch(name string, dir int, wrap bool) {
	sw, ok := m.switchByName(name)
	if !ok || m.controls == nil || len(sw.Options) == 0 {
		m.setStatus(fmt.Sprintf("this lab has no %s switch", name), true)
		return
	}
	i := indexOf(sw.Options, sw.Value)
	next := i + dir
	switch {
	case wrap:
		next = (next + len(sw.Options)) % len(sw.Options)
	case next < 0 || next >= len(sw.Options):
		m.setStatus(fmt.Sprintf("%s is already at its %s", name, map[bool]string{true: "fastest", false: "slowest"}[dir > 0]), false)
		return
	}
	value := sw.Options[next]
	if err := m.controls.SetSwitch(name, value); err != nil {
		m.setStatus(fmt.Sprintf("%s=%s: %v", name, value, err), true)
		return
	}
	m.changed, m.changedAt = name, m.clock()
	m.setStatus(fmt.Sprintf("%s → %s: %s", name, value, explainSwitch(name, value)), false)
	m.refreshControls()
}

func indexOf(options []string, v string) int {
	for i, o := range options {
		if o == v {
			return i
		}
	}
	return -1
}

// explainSwitch says, in one line, what the new value does to the next reconciles.
func explainSwitch(name, value string) string {
	switch name + "=" + value {
	case "requeue=error":
		return "not-ready returns an error → AddRateLimited (5ms·2ⁿ per item)"
	case "requeue=requeue":
		return "returns Requeue: true (deprecated) → also AddRateLimited, not immediate"
	case "requeue=after":
		return "returns RequeueAfter → Forget + AddAfter(d): a fixed delay you choose"
	case "requeue=terminal":
		return "returns TerminalError → logged, not retried, no Forget"
	case "breaker=on":
		return "external calls go through the circuit breaker"
	case "breaker=off":
		return "external calls bypass the circuit breaker"
	case "ratelimit=on":
		return "external calls are rate limited (x/time/rate)"
	case "ratelimit=off":
		return "external calls are not rate limited"
	case "backoff=controller":
		return "retry delays come from the queue's rate limiter"
	case "backoff=lesson":
		return "retry delays come from the lesson's 5s·2ⁿ backoff via RequeueAfter"
	}
	switch name {
	case switchExternal:
		return "the simulated external system is now " + value
	case switchTimescale:
		if f, err := strconv.ParseFloat(value, 64); err == nil && f > 1 {
			return fmt.Sprintf("delays the operator chooses are %s× shorter", value)
		}
		return "delays run at real time"
	}
	return "applies from the next reconcile"
}

func (m *Model) action(what string, run func(context.Context, Controls) (string, error)) tea.Cmd {
	return m.notedAction(what, run, "")
}

// notedAction is action with a note said after the object's name.
func (m *Model) notedAction(what string, run func(context.Context, Controls) (string, error), note string) tea.Cmd {
	c := m.controls
	if c == nil {
		return nil
	}
	m.setStatus(what+"…", false)
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		key, err := run(ctx, c)
		if err == nil && key != "" {
			what += " " + m.displayKey(key)
		}
		return actionDoneMsg{what: what + note, key: key, err: err}
	}
}

func (m *Model) objectAction(what string, run func(context.Context, Controls, string) error) tea.Cmd {
	o, ok := m.selectedObject()
	if !ok || o.Deleted {
		m.setStatus("no object selected: press c to create one", true)
		return nil
	}
	objectKey := o.Key
	return m.action(what+" "+m.displayKey(objectKey), func(ctx context.Context, c Controls) (string, error) {
		return "", run(ctx, c, objectKey)
	})
}
