package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/operator-lab/lab/internal/tui/state"
	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator/switches"
)

// patternsPane is the circuit breaker on its three states, the rate
// limiter and the external system's recent calls, each with its switch.
// It shows only what the running lab has: a pattern whose switch the lab
// does not offer and whose events never came (the breaker and the limiter
// in lab 3.1, whose controller calls its dependency directly) is left out,
// rather than drawn standing still.
type patternsPane struct {
	c *common
	size
}

// The parts of the pane, each shown when the lab has its switch or its
// events arrived.
func (p *patternsPane) showsBreaker() bool {
	return p.c.state.Breaker().Seen || p.c.switchValue(switches.NameBreaker) != ""
}

func (p *patternsPane) showsLimiter() bool {
	return p.c.state.RateLimit().Seen || p.c.switchValue(switches.NameRateLimit) != ""
}

func (p *patternsPane) showsExternal() bool {
	return p.c.state.External().Seen || p.c.switchValue(switches.NameExternal) != ""
}

// Title names the parts shown, so that lab 3.1's pane is "External system".
func (p *patternsPane) Title() string {
	var parts []string
	if p.showsBreaker() {
		parts = append(parts, "Breaker")
	}
	if p.showsLimiter() {
		parts = append(parts, "limiter")
	}
	switch {
	case len(parts) == 0 && p.showsExternal():
		return "External system"
	case len(parts) == 0:
		return "Breaker · limiter · external"
	case p.showsExternal():
		parts = append(parts, "external")
	}
	title := strings.Join(parts, " · ")
	return strings.ToUpper(title[:1]) + title[1:]
}

func (p *patternsPane) Hint() string {
	if !p.showsBreaker() && !p.showsLimiter() {
		return "calls to the dependency"
	}
	return "protecting the external system"
}

func (p *patternsPane) View() []string {
	st, w, h := p.c.st, p.width, p.height
	now := p.c.now()
	var lines []string

	if p.showsBreaker() {
		lines = append(lines, p.breakerLines(now)...)
	}

	rl := p.c.state.RateLimit()
	if p.showsLimiter() {
		lines = append(lines, st.Bold.Render("Rate limiter ")+onOff(st, p.c.switchValue(switches.NameRateLimit)))
		if rl.Checks > 0 {
			waited := fmt.Sprintf("  %d of %d calls waited", rl.Waited, rl.Calls)
			if !rl.EveryCall {
				// A trace from before every check was reported: the calls
				// let through at once are not in it.
				waited = fmt.Sprintf("  %d calls waited", rl.Waited)
			}
			if rl.Delayed > 0 {
				waited += " · last wait " + formatDuration(rl.LastWait)
			}
			lines = append(lines, st.Faint.Render(waited))
		}
	}

	x := p.c.state.External()
	xSwitch := p.c.switchValue(switches.NameExternal)
	if p.showsExternal() {
		line := st.Bold.Render("External system ")
		if xSwitch != "" {
			style := st.OK
			if xSwitch != string(switches.ExternalHealthy) {
				style = st.Bad
			}
			line += style.Render(xSwitch)
		}
		lines = append(lines, line)
		if x.Calls.Len() > 0 {
			calls := x.Calls.Slice()
			maxMarks := max(w-4, 5)
			if len(calls) > maxMarks {
				calls = calls[len(calls)-maxMarks:]
			}
			var marks strings.Builder
			var total time.Duration
			for _, c := range calls {
				total += c.Latency
				if c.Succeeded() {
					marks.WriteString(st.OK.Render("✓"))
				} else {
					marks.WriteString(st.Bad.Render("✗"))
				}
			}
			ok := 100 * x.OK / max(x.OK+x.Failed, 1)
			lines = append(lines, "  "+marks.String(),
				st.Faint.Render(fmt.Sprintf("  %d%% ok of %d calls · avg %s", ok, x.OK+x.Failed, formatDuration(total/time.Duration(len(calls))))))
		}
	}
	if len(lines) == 0 {
		return []string{st.Faint.Render("This lab has no breaker, rate limiter or external system."),
			st.Faint.Render("Lab 4.4 puts all three in front of its external dependency.")}
	}
	return lines[:min(len(lines), h)]
}

// breakerLines: the switch and the calls refused, the three states with
// the current one in [ ], the failure count as it is now, the countdown to
// the probe while open, and the transitions, newest last, with how long
// ago each was — half-open included, which lasts only as long as the probe.
func (p *patternsPane) breakerLines(now time.Time) []string {
	st, w := p.c.st, p.width
	b := p.c.state.Breaker()
	var cells []string
	for _, s := range []string{state.BreakerClosed, state.BreakerOpen, state.BreakerHalfOpen} {
		if s == b.State {
			style := st.OK
			if s != state.BreakerClosed {
				style = st.Bad
			}
			cells = append(cells, style.Render("["+s+"]"))
		} else {
			cells = append(cells, st.Faint.Render(" "+s+" "))
		}
	}
	title := st.Bold.Render("Circuit breaker ")
	if v := p.c.switchValue(switches.NameBreaker); v != "" {
		title += onOff(st, v)
	}
	switch {
	case b.Refused == 1:
		title += st.Faint.Render(" · 1 call refused")
	case b.Refused > 1:
		title += st.Faint.Render(fmt.Sprintf(" · %d calls refused", b.Refused))
	}
	lines := []string{title, "  " + strings.Join(cells, st.Faint.Render("›"))}
	detail := fmt.Sprintf("  failures %d", b.Failures)
	if b.State == state.BreakerOpen && !b.ProbeAt.IsZero() {
		if left := b.ProbeAt.Sub(now); left > 0 {
			detail += " · next probe in " + formatDuration(left.Round(100*time.Millisecond))
		} else if due := detail + " · probe due: the next call probes"; ansi.StringWidth(due) <= w {
			detail = due
		} else {
			detail += " · probe due"
		}
	}
	lines = append(lines, st.Faint.Render(detail))
	if b.Transitions > 0 {
		lines = append(lines, st.Faint.Render(breakerHistory(b, now, w)))
	}
	return lines
}

// breakerHistory: "  open 12s › half-open 6.0s › closed 6.0s ago", the
// state each transition went to and how long ago, keeping the newest that
// fit in w cells.
func breakerHistory(b state.Breaker, now time.Time, w int) string {
	changes := b.History.Slice()
	parts := make([]string, len(changes))
	for i, c := range changes {
		parts[i] = c.To + " " + formatDuration(now.Sub(c.At).Truncate(100*time.Millisecond))
	}
	dropped := len(changes) < b.Transitions // the ring let the oldest go
	for {
		text := strings.Join(parts, " › ") + " ago"
		if dropped {
			text = "… › " + text
		}
		text = "  " + text
		if len(parts) == 1 || ansi.StringWidth(text) <= w {
			return text
		}
		parts, dropped = parts[1:], true
	}
}

// breakerStep is a breaker event as a step of the reconcile it happened
// in: a transition, the count a failure or success left, or a call the
// breaker refused (and so never made), with the time left to the probe.
func breakerStep(e observe.Event) string {
	u := e.Breaker()
	switch {
	case u.Transition():
		return fmt.Sprintf("breaker %s → %s (failures %d)", u.From, u.State, u.Failures)
	case u.Refused && u.ProbeIn > 0:
		return fmt.Sprintf("breaker %s: call refused · probe in %s", u.State, formatDuration(u.ProbeIn.Round(100*time.Millisecond)))
	case u.Refused:
		return fmt.Sprintf("breaker %s: call refused", u.State)
	}
	return fmt.Sprintf("breaker %s · failures %d", firstNonEmpty(u.State, "?"), u.Failures)
}

// rateLimitStep is a rate-limiter check as a step of its reconcile.
func rateLimitStep(e observe.Event) string {
	c := e.RateLimit()
	calls := "a call"
	if c.Calls > 1 {
		calls = fmt.Sprintf("%d calls", c.Calls)
	}
	if c.Wait > 0 {
		return fmt.Sprintf("rate limiter: %s must wait %s", calls, formatDuration(c.Wait))
	}
	return "rate limiter: " + calls + " allowed at once"
}

func onOff(st Styles, v string) string {
	switch v {
	case "on":
		return st.OK.Render("on")
	case "off":
		return st.Faint.Render("off")
	}
	return st.Value.Render(v)
}
