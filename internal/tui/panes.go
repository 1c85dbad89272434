package tui

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/operator-lab/lab/internal/tui/state"
)

// queueLines: the work queue from inside — running, waiting (with how
// many adds merged), delayed (with a countdown bar and who chose the delay).
func (m Model) queueLines(w, h int) []string {
	st := m.st
	now := m.now()
	counts := m.state.QueueCounts(now)
	summary := fmt.Sprintf("%d running · %d waiting · %d delayed",
		counts[state.QueueProcessing], counts[state.QueueWaiting], counts[state.QueueDelayed])
	if len(summary) > w {
		summary = fmt.Sprintf("%d run · %d wait · %d delayed", counts[state.QueueProcessing], counts[state.QueueWaiting], counts[state.QueueDelayed])
	}
	if len(summary) > w {
		summary = fmt.Sprintf("▶%d ●%d ◷%d", counts[state.QueueProcessing], counts[state.QueueWaiting], counts[state.QueueDelayed])
	}
	lines := []string{st.Faint.Render(summary)}
	if m.paused && m.replay == nil {
		lines = append(lines, st.Warn.Render(fmt.Sprintf("paused: %d held at the gate · s steps one", m.waiting)))
	}
	items := m.state.Queue(now)
	if len(items) == 0 {
		return append(lines, st.Faint.Render("empty: nothing to reconcile"))
	}
	keyW := 0
	for _, q := range items {
		keyW = max(keyW, len(m.displayKey(q.Key)))
	}
	keyW = min(keyW, max(w/3, 10))
	room := h - len(lines)
	for i, q := range items {
		if i == room-1 && len(items) > room {
			lines = append(lines, st.Faint.Render(fmt.Sprintf("… and %d more", len(items)-i)))
			break
		}
		lines = append(lines, m.queueItemLine(q, now, keyW, w))
	}
	return lines
}

func (m Model) queueItemLine(q *state.QueueItem, now time.Time, keyW, w int) string {
	st := m.st
	key := fmt.Sprintf("%-*s", keyW, truncate(m.displayKey(q.Key), keyW))
	var mark, word, extra string
	switch q.StateAt(now) {
	case state.QueueProcessing:
		s := st.Lanes[laneReconcile]
		mark, word = s.Render("▶"), s.Render("running ")
		extra = formatDuration(now.Sub(q.Since))
		if m.state.AwaitingStart(q.Key) {
			word = st.Warn.Render("dequeued")
			if m.paused {
				extra = st.Warn.Render("held at the gate")
			}
		}
	case state.QueueWaiting:
		s := st.Lanes[laneQueue]
		mark, word = s.Render("●"), s.Render("waiting ")
		since := q.Since
		if q.State == state.QueueDelayed {
			since = q.ReadyAt
		}
		extra = formatDuration(now.Sub(since))
		if q.Adds > 1 {
			extra += st.Faint.Render(fmt.Sprintf(" ×%d merged", q.Adds))
		}
	case state.QueueDelayed:
		s := st.Chooser(q.DelayedBy)
		mark, word = s.Render("◷"), s.Render("delayed ")
		left := q.ReadyAt.Sub(now)
		total := q.ReadyAt.Sub(q.Since)
		extra = "in " + formatDuration(left.Round(100*time.Millisecond))
		// The countdown bar and who chose the delay, when there is room.
		if room := w - keyW - 13 - len(extra); room >= 8 {
			barW := min(room-1, 12)
			extra += " " + s.Render(progressBar(total-left, total, barW))
			if room-barW-1 > len(q.DelayedBy) {
				extra += st.Faint.Render(" " + string(q.DelayedBy))
			}
		}
	}
	line := mark + " " + key + " " + word + " " + extra
	if q.Failures > 0 {
		fails := fmt.Sprintf("  failures %d", q.Failures)
		if ansi.StringWidth(line)+len(fails) > w {
			fails = fmt.Sprintf(" ✗%d", q.Failures)
		}
		line += st.Bad.Render(fails)
	}
	if q.Requeued && q.State == state.QueueProcessing {
		line += st.Faint.Render(" +re-added")
	}
	return line
}

// progressBar fills done/total of w cells.
func progressBar(done, total time.Duration, w int) string {
	if total <= 0 || w <= 0 {
		return strings.Repeat("━", max(w, 0))
	}
	n := int(math.Round(float64(w) * float64(done) / float64(total)))
	n = min(max(n, 0), w)
	return strings.Repeat("━", n) + strings.Repeat("╌", w-n)
}

// backoffLines: the retry delays of the selected object (or the key that
// retried most recently), one bar per reconcile on a log scale, each
// labelled with who chose it.
func (m Model) backoffLines(w, h int) []string {
	st := m.st
	var series *state.Series
	if o, ok := m.selectedObject(); ok {
		series, _ = m.state.Series(o.Key)
	}
	if series == nil {
		if all := m.state.AllSeries(); len(all) > 0 {
			series = all[0]
		}
	}
	legend := st.RateLimiter.Render("█ rate limiter") + "  " +
		st.RequeueAfter.Render("▓ RequeueAfter") + "  " + st.Lesson.Render("▒ lesson backoff")
	if series == nil || series.Retries.Len() == 0 {
		return []string{st.Faint.Render("No retries yet. Make the external system fail (e) and watch"),
			st.Faint.Render("the delays grow here, labelled by who chose them."), "", legend}
	}
	lines := []string{st.Bold.Render(m.displayKey(series.Key)) + st.Faint.Render(fmt.Sprintf("  %d reconcile(s) · bars on a log scale", series.Total))}
	retries := series.Retries.Slice()
	room := h - 2
	if len(retries) > room {
		retries = retries[len(retries)-max(room, 0):]
	}
	// "#12  error    40ms " before the bar, who chose the delay after it;
	// a narrow pane gets the short names.
	whoW := func(short bool) int {
		n := 0
		for _, r := range retries {
			n = max(n, len(chooserLabel(r, short)))
		}
		return n
	}
	short := w-20-whoW(false)-1 < 8
	barW := max(w-20-whoW(short)-1, 3)
	for i, r := range retries {
		afterFailure := i > 0 && retries[i-1].By == state.ChosenByRateLimiter
		lines = append(lines, m.retryLine(r, barW, short, afterFailure))
	}
	if ansi.StringWidth(legend) > w {
		legend = st.RateLimiter.Render("█ limiter") + " " + st.RequeueAfter.Render("▓ RequeueAfter") + " " + st.Lesson.Render("▒ lesson")
	}
	if h-len(lines) >= 1 {
		lines = append(lines, legend)
	}
	return lines
}

func (m Model) retryLine(r state.Retry, barW int, short, afterFailure bool) string {
	st := m.st
	n := fmt.Sprintf("#%-3d", r.Reconcile)
	if r.Reconcile == 0 {
		n = "    "
	}
	result := fmt.Sprintf("%-7s", shortResult[r.Result])
	if r.Delay <= 0 {
		note := "no retry"
		switch r.Result {
		case "success":
			note = "done, no retry"
			if afterFailure {
				note = "done: Forget reset the failures"
			}
		case "terminal":
			note = "terminal: never retried"
		}
		return st.Faint.Render(n) + " " + st.Result(r.Result).Render(result) + st.Faint.Render(fmt.Sprintf(" %6s %s", "—", note))
	}
	glyph := map[state.Chooser]string{state.ChosenByRateLimiter: "█", state.ChosenByRequeueAfter: "▓", state.ChosenByLesson: "▒"}[r.By]
	bar := strings.Repeat(glyph, logBar(r.Delay, barW))
	who := chooserLabel(r, short)
	return st.Faint.Render(n) + " " + st.Result(r.Result).Render(result) + fmt.Sprintf(" %6s ", formatDuration(r.Delay)) +
		st.Chooser(r.By).Render(fmt.Sprintf("%-*s", barW, bar)) + " " + st.Chooser(r.By).Render(who)
}

// chooserLabel names who chose a retry's delay, and which failure or
// attempt it was.
func chooserLabel(r state.Retry, short bool) string {
	if r.Delay <= 0 {
		return ""
	}
	name := string(r.By)
	if short {
		name = map[state.Chooser]string{state.ChosenByRateLimiter: "limiter", state.ChosenByRequeueAfter: "After", state.ChosenByLesson: "lesson"}[r.By]
	}
	switch {
	case r.By == state.ChosenByRateLimiter && r.Failures > 0 && short:
		name += fmt.Sprintf(" #%d", r.Failures)
	case r.By == state.ChosenByRateLimiter && r.Failures > 0:
		name += fmt.Sprintf(" · failure %d", r.Failures)
	case r.By == state.ChosenByLesson && r.Attempt > 0 && short:
		name += fmt.Sprintf(" #%d", r.Attempt)
	case r.By == state.ChosenByLesson && r.Attempt > 0:
		name += fmt.Sprintf(" · attempt %d", r.Attempt)
	}
	return name
}

// shortResult names results in the backoff pane's narrow column, the way
// the code spells what was returned.
var shortResult = map[string]string{
	"success": "ok", "error": "error", "requeue": "Requeue", "requeue_after": "After", "terminal": "Terminal",
}

// logBar maps 1ms…1000s onto 1…w cells, so each doubling adds the same length.
func logBar(d time.Duration, w int) int {
	const decades = 6.0
	ms := float64(d) / float64(time.Millisecond)
	if ms < 1 {
		ms = 1
	}
	n := int(math.Round(float64(w) * math.Log10(ms) / decades))
	return min(max(n, 1), w)
}

// patternLines: the circuit breaker on its three states, the rate limiter
// and the external system's recent calls.
func (m Model) patternLines(w, h int) []string {
	st := m.st
	now := m.now()
	_, values := m.state.Switches()
	switchValue := func(name string) string {
		if s, ok := m.switchByName(name); ok {
			return s.Value
		}
		return values[name]
	}
	var lines []string

	b := m.state.Breaker()
	breakerSwitch := switchValue(switchBreaker)
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

	rl := m.state.RateLimit()
	rlSwitch := switchValue(switchRateLimit)
	if rl.Seen || rlSwitch != "" {
		lines = append(lines, st.Bold.Render("Rate limiter ")+onOff(st, rlSwitch))
		if rl.Checks > 0 {
			lines = append(lines, st.Faint.Render(fmt.Sprintf("  %d of %d calls waited · last wait %s", rl.Delayed, rl.Checks, formatDuration(rl.LastWait))))
		}
	}

	x := m.state.External()
	xSwitch := switchValue(switchExternal)
	if x.Seen || xSwitch != "" {
		line := st.Bold.Render("External system ")
		if xSwitch != "" {
			style := st.OK
			if xSwitch != "healthy" {
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

func truncate(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	if n <= 1 {
		return string([]rune(s)[:n])
	}
	return string([]rune(s)[:n-1]) + "…"
}
