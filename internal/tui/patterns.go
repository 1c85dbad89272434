package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/operator-lab/lab/internal/tui/state"
	"github.com/operator-lab/lab/operator/switches"
)

// patternsPane is the circuit breaker on its three states, the rate
// limiter and the external system's recent calls, each with its switch.
type patternsPane struct {
	c *common
	size
}

func (p *patternsPane) Title() string { return "Breaker · limiter · external" }
func (p *patternsPane) Hint() string  { return "protecting the external system" }

func (p *patternsPane) View() []string {
	st, w, h := p.c.st, p.width, p.height
	now := p.c.now()
	var lines []string

	b := p.c.state.Breaker()
	breakerSwitch := p.c.switchValue(switches.NameBreaker)
	if b.Seen || breakerSwitch != "" {
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
		if breakerSwitch != "" {
			title += onOff(st, breakerSwitch)
		}
		lines = append(lines, title, "  "+strings.Join(cells, st.Faint.Render("›")))
		detail := fmt.Sprintf("  failures %d", b.Failures)
		if b.State == state.BreakerOpen && !b.ProbeAt.IsZero() {
			if left := b.ProbeAt.Sub(now); left > 0 {
				detail += " · next probe in " + formatDuration(left.Round(100*time.Millisecond))
			} else {
				detail += " · probe due"
			}
		}
		if b.Transitions > 0 {
			detail += fmt.Sprintf(" · %d transition(s), last %s ago", b.Transitions, formatDuration(now.Sub(b.Since).Truncate(100*time.Millisecond)))
		}
		lines = append(lines, st.Faint.Render(detail))
	}

	rl := p.c.state.RateLimit()
	rlSwitch := p.c.switchValue(switches.NameRateLimit)
	if rl.Seen || rlSwitch != "" {
		lines = append(lines, st.Bold.Render("Rate limiter ")+onOff(st, rlSwitch))
		if rl.Checks > 0 {
			lines = append(lines, st.Faint.Render(fmt.Sprintf("  %d of %d calls waited · last wait %s", rl.Delayed, rl.Checks, formatDuration(rl.LastWait))))
		}
	}

	x := p.c.state.External()
	xSwitch := p.c.switchValue(switches.NameExternal)
	if x.Seen || xSwitch != "" {
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

func onOff(st Styles, v string) string {
	switch v {
	case "on":
		return st.OK.Render("on")
	case "off":
		return st.Faint.Render("off")
	}
	return st.Value.Render(v)
}
