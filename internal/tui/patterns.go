package tui

import (
	"strings"
	"time"
	"unicode"

	"github.com/charmbracelet/x/ansi"

	"github.com/operator-lab/lab/internal/l10n"
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
	say := p.c.say
	var parts []string
	if p.showsBreaker() {
		parts = append(parts, say.Text("breaker"))
	}
	if p.showsLimiter() {
		parts = append(parts, say.Text("limiter"))
	}
	switch {
	case len(parts) == 0 && p.showsExternal():
		return say.Text("External system")
	case len(parts) == 0:
		return say.Text("Breaker · limiter · external")
	case p.showsExternal():
		parts = append(parts, say.Text("external"))
	}
	title := []rune(strings.Join(parts, " · "))
	return string(unicode.ToUpper(title[0])) + string(title[1:])
}

func (p *patternsPane) Hint() string {
	if !p.showsBreaker() && !p.showsLimiter() {
		return p.c.say.Text("calls to the dependency")
	}
	return p.c.say.Text("protecting the external system")
}

func (p *patternsPane) View() []string {
	st, say, w, h := p.c.st, p.c.say, p.width, p.height
	now := p.c.now()
	var lines []string

	if p.showsBreaker() {
		lines = append(lines, p.breakerLines(now)...)
	}

	rl := p.c.state.RateLimit()
	if p.showsLimiter() {
		lines = append(lines, st.Bold.Render(say.Text("Rate limiter "))+onOff(st, p.c.switchValue(switches.NameRateLimit)))
		if rl.Checks > 0 {
			waited := say.Count(rl.Waited, "  %d of %d calls waited", "  %d of %d calls waited", rl.Calls)
			if !rl.EveryCall {
				// A trace from before every check was reported: the calls
				// let through at once are not in it.
				waited = say.Count(rl.Waited, "  %d calls waited", "  %d calls waited")
			}
			if rl.Delayed > 0 {
				waited += say.Textf(" · last wait %s", formatDuration(rl.LastWait))
			}
			lines = append(lines, st.Faint.Render(waited))
		}
	}

	x := p.c.state.External()
	xSwitch := p.c.switchValue(switches.NameExternal)
	if p.showsExternal() {
		line := st.Bold.Render(say.Text("External system "))
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
				st.Faint.Render(say.Textf("  %d%% ok of %d calls · avg %s", ok, x.OK+x.Failed, formatDuration(total/time.Duration(len(calls))))))
		}
	}
	if len(lines) == 0 {
		return []string{st.Faint.Render(say.Text("This lab has no breaker, rate limiter or external system.")),
			st.Faint.Render(say.Text("Lab 4.4 puts all three in front of its external dependency."))}
	}
	return lines[:min(len(lines), h)]
}

// breakerLines: the switch and the calls refused, the three states with
// the current one in [ ], the failure count as it is now, the countdown to
// the probe while open, and the transitions, newest last, with how long
// ago each was — half-open included, which lasts only as long as the probe.
func (p *patternsPane) breakerLines(now time.Time) []string {
	st, say, w := p.c.st, p.c.say, p.width
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
	title := st.Bold.Render(say.Text("Circuit breaker "))
	if v := p.c.switchValue(switches.NameBreaker); v != "" {
		title += onOff(st, v)
	}
	if b.Refused > 0 {
		title += st.Faint.Render(say.Count(b.Refused, " · %d call refused", " · %d calls refused"))
	}
	lines := []string{title, "  " + strings.Join(cells, st.Faint.Render("›"))}
	detail := say.Textf("  failures %d", b.Failures)
	if b.State == state.BreakerOpen && !b.ProbeAt.IsZero() {
		if left := b.ProbeAt.Sub(now); left > 0 {
			detail += say.Textf(" · next probe in %s", formatDuration(left.Round(100*time.Millisecond)))
		} else if due := detail + say.Text(" · probe due: the next call probes"); ansi.StringWidth(due) <= w {
			detail = due
		} else {
			detail += say.Text(" · probe due")
		}
	}
	lines = append(lines, st.Faint.Render(detail))
	if b.Transitions > 0 {
		lines = append(lines, st.Faint.Render(breakerHistory(say, b, now, w)))
	}
	return lines
}

// breakerHistory: "  open 12s › half-open 6.0s › closed 6.0s ago", the
// state each transition went to and how long ago, keeping the newest that
// fit in w cells.
func breakerHistory(say l10n.Printer, b state.Breaker, now time.Time, w int) string {
	changes := b.History.Slice()
	parts := make([]string, len(changes))
	for i, c := range changes {
		parts[i] = c.To + " " + formatDuration(now.Sub(c.At).Truncate(100*time.Millisecond))
	}
	dropped := len(changes) < b.Transitions // the ring let the oldest go
	for {
		text := say.Textf("%s ago", strings.Join(parts, " › "))
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
func breakerStep(say l10n.Printer, e observe.Event) string {
	u := e.Breaker()
	switch {
	case u.Transition():
		return say.Textf("breaker %s → %s (failures %d)", u.From, u.State, u.Failures)
	case u.Refused && u.ProbeIn > 0:
		return say.Textf("breaker %s: call refused · probe in %s", u.State, formatDuration(u.ProbeIn.Round(100*time.Millisecond)))
	case u.Refused:
		return say.Textf("breaker %s: call refused", u.State)
	}
	return say.Textf("breaker %s · failures %d", firstNonEmpty(u.State, "?"), u.Failures)
}

// rateLimitStep is a rate-limiter check as a step of its reconcile.
func rateLimitStep(say l10n.Printer, e observe.Event) string {
	c := e.RateLimit()
	calls := say.Text("a call")
	if c.Calls > 1 {
		calls = say.Count(c.Calls, "%d call", "%d calls")
	}
	if c.Wait > 0 {
		return say.Textf("rate limiter: %s must wait %s", calls, formatDuration(c.Wait))
	}
	return say.Textf("rate limiter: %s allowed at once", calls)
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
