package tui

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/operator-lab/lab/internal/l10n"
	"github.com/operator-lab/lab/internal/tui/state"
	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator/switches"
)

// queuePane is the work queue from inside: running, waiting (with how
// many adds merged), delayed (with a countdown bar and who chose the delay).
type queuePane struct {
	c *common
	size
}

func (p *queuePane) Title() string { return p.c.say.Text("Work queue") }
func (p *queuePane) Hint() string  { return p.c.say.Text("keys waiting for a worker") }

func (p *queuePane) View() []string {
	st, say, w, h := p.c.st, p.c.say, p.width, p.height
	now := p.c.now()
	counts := p.c.state.QueueCounts(now)
	paused, waiting := p.c.gate()
	// A key a worker took whose reconcile has not started is not running:
	// a paused gate holds it, or it is about to start.
	held, heldShort := "", ""
	switch n := counts[state.QueueDequeued]; {
	case n > 0 && paused:
		held, heldShort = say.Textf(" · %d held at the gate", n), say.Textf(" · %d held", n)
	case n > 0:
		held = say.Textf(" · %d dequeued", n)
		heldShort = held
	}
	run, wait, later := counts[state.QueueProcessing], counts[state.QueueWaiting], counts[state.QueueDelayed]
	summary := say.Textf("%d running%s · %d waiting · %d delayed", run, held, wait, later)
	if ansi.StringWidth(summary) > w {
		summary = say.Textf("%d running%s · %d waiting · %d delayed", run, heldShort, wait, later)
	}
	if ansi.StringWidth(summary) > w {
		summary = say.Textf("%d run%s · %d wait · %d delayed", run, heldShort, wait, later)
	}
	if ansi.StringWidth(summary) > w {
		summary = fmt.Sprintf("▶%d ❚%d ●%d ◷%d", run, counts[state.QueueDequeued], wait, later)
	}
	lines := []string{st.Faint.Render(summary)}
	if paused {
		held := say.Textf("paused: %d held at the gate", waiting)
		if !p.c.replay {
			held += say.Text(" · s steps one")
		}
		lines = append(lines, st.Warn.Render(held))
	}
	items := p.c.state.Queue(now)
	if len(items) == 0 {
		return append(lines, st.Faint.Render(say.Text("empty: nothing to reconcile")))
	}
	keyW := 0
	for _, q := range items {
		keyW = max(keyW, len(p.c.displayKey(q.Key)))
	}
	keyW = min(keyW, max(w/3, 10))
	room := h - len(lines)
	for i, q := range items {
		if i == room-1 && len(items) > room {
			lines = append(lines, st.Faint.Render(say.Textf("… and %d more", len(items)-i)))
			break
		}
		lines = append(lines, p.itemLine(q, now, keyW, paused))
	}
	return lines
}

func (p *queuePane) itemLine(q *state.QueueItem, now time.Time, keyW int, paused bool) string {
	st, say, w := p.c.st, p.c.say, p.width
	key := fmt.Sprintf("%-*s", keyW, truncate(p.c.displayKey(q.Key), keyW))
	// The state words share one column, as wide as the widest.
	words := [...]string{say.Text("running"), say.Text("dequeued"), say.Text("waiting"), say.Text("delayed")}
	wordW := 0
	for _, wd := range words {
		wordW = max(wordW, ansi.StringWidth(wd))
	}
	word := func(i int) string { return padRight(words[i], wordW) }
	var mark, extra string
	var shown string
	switch p.c.state.ItemState(q, now) {
	case state.QueueProcessing:
		s := st.Lanes[laneReconcile]
		mark, shown = s.Render("▶"), s.Render(word(0))
		extra = formatDuration(now.Sub(q.Since))
	case state.QueueDequeued:
		mark, shown = st.Warn.Render("❚"), st.Warn.Render(word(1))
		extra = formatDuration(now.Sub(q.Since))
		if paused {
			extra = st.Warn.Render(say.Text("held at the gate"))
		}
	case state.QueueWaiting:
		s := st.Lanes[laneQueue]
		mark, shown = s.Render("●"), s.Render(word(2))
		since := q.Since
		if q.State == state.QueueDelayed {
			since = q.ReadyAt
		}
		extra = formatDuration(now.Sub(since))
		if q.Adds > 1 {
			extra += st.Faint.Render(say.Textf(" ×%d merged", q.Adds))
		}
	case state.QueueDelayed:
		s := st.Chooser(q.DelayedBy)
		mark, shown = s.Render("◷"), s.Render(word(3))
		left := q.ReadyAt.Sub(now)
		total := q.ReadyAt.Sub(q.Since)
		extra = say.Textf("in %s", formatDuration(left.Round(100*time.Millisecond)))
		// The countdown bar and who chose the delay, when there is room.
		if room := w - keyW - 5 - wordW - ansi.StringWidth(extra); room >= 8 {
			barW := min(room-1, 12)
			extra += " " + s.Render(progressBar(total-left, total, barW))
			if by := chooserName(say, q.DelayedBy); room-barW-1 > ansi.StringWidth(by) {
				extra += st.Faint.Render(" " + by)
			}
		}
	}
	line := mark + " " + key + " " + shown + " " + extra
	if q.Failures > 0 {
		fails := say.Textf("  failures %d", q.Failures)
		if ansi.StringWidth(line)+ansi.StringWidth(fails) > w {
			fails = fmt.Sprintf(" ✗%d", q.Failures)
		}
		line += st.Bad.Render(fails)
	}
	if q.Requeued && q.State == state.QueueProcessing {
		line += st.Faint.Render(say.Text(" +re-added"))
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

// backoffPane is the retry delays of the selected object (or the key
// that retried most recently), one bar per reconcile on a log scale, each
// labelled with who chose it.
type backoffPane struct {
	c *common
	f *focus
	size
}

func (p *backoffPane) Title() string { return p.c.say.Text("Retry delays") }
func (p *backoffPane) Hint() string {
	return p.c.say.Text("when each retry came, and who chose the delay")
}

func (p *backoffPane) View() []string {
	st, say, w, h := p.c.st, p.c.say, p.width, p.height
	var series *state.Series
	if o, ok := p.f.object(p.c.state); ok {
		series, _ = p.c.state.Series(o.Key)
	}
	if series == nil {
		if all := p.c.state.AllSeries(); len(all) > 0 {
			series = all[0]
		}
	}
	// The lesson's backoff is one of the choosers only where the controller
	// computes it (lab 4.4's backoff switch) or it was seen choosing.
	lesson := p.c.hasSwitch(switches.NameBackoff) || p.c.state.Totals().ByKind[observe.KindBackoff] > 0
	legend := st.RateLimiter.Render("█ "+chooserName(say, state.ChosenByRateLimiter)) + "  " + st.RequeueAfter.Render("▓ "+chooserName(say, state.ChosenByRequeueAfter))
	if lesson {
		legend += "  " + st.Lesson.Render("▒ "+chooserName(say, state.ChosenByLesson))
	}
	if series == nil || series.Retries.Len() == 0 {
		return []string{st.Faint.Render(say.Text("No retries yet. Make the external system fail (e) and watch")),
			st.Faint.Render(say.Text("the delays grow here, labelled by who chose them.")), "", legend}
	}
	lines := []string{st.Bold.Render(p.c.displayKey(series.Key)) + st.Faint.Render(say.Count(series.Total, "  %d reconcile(s) · bars on a log scale", "  %d reconcile(s) · bars on a log scale"))}
	retries := series.Retries.Slice()
	room := h - 2
	reset := limiterResetsBackoff(retries)
	if reset {
		room -= 2
	}
	if len(retries) > room {
		retries = retries[len(retries)-max(room, 0):]
	}
	// "#12  error    40ms " before the bar, who chose the delay after it;
	// a narrow pane gets the short names.
	whoW := func(short bool) int {
		n := 0
		for _, r := range retries {
			// A label with a count ("· failure 3") keeps one cell
			// clear before the border, as the pane has always drawn it.
			label := chooserLabel(say, r, short)
			n = max(n, ansi.StringWidth(label)+strings.Count(label, labelSep))
		}
		return n
	}
	short := w-20-whoW(false)-1 < 8
	barW := max(w-20-whoW(short)-1, 3)
	for i, r := range retries {
		afterFailure := i > 0 && retries[i-1].By == state.ChosenByRateLimiter
		lines = append(lines, retryLine(st, say, r, barW, short, afterFailure))
	}
	if ansi.StringWidth(legend) > w {
		legend = st.RateLimiter.Render("█ "+say.Text("limiter")) + " " + st.RequeueAfter.Render("▓ RequeueAfter")
		if lesson {
			legend += " " + st.Lesson.Render("▒ "+say.Text("lesson"))
		}
	}
	if h-len(lines) >= 1 {
		lines = append(lines, legend)
	}
	if reset && h-len(lines) >= 2 {
		// The loop item 6 of the UX audit found: nothing on the bars alone
		// says why the queue's delays never grow.
		lines = append(lines, st.Warn.Render(say.Text("⚠ each limiter wait is a RequeueAfter, and the queue Forgets the key for it:")),
			st.Warn.Render(say.Text("  its backoff starts over after every wait and never grows")))
	}
	return lines
}

// limiterResetsBackoff reports whether retries show the client-side rate
// limiter's RequeueAfter resetting the queue's backoff: a rate-limited
// retry right after a limiter wait, counting its failures from 1 again.
func limiterResetsBackoff(retries []state.Retry) bool {
	for i := 1; i < len(retries); i++ {
		if retries[i-1].LimiterWait && retries[i].By == state.ChosenByRateLimiter && retries[i].Failures <= 1 {
			return true
		}
	}
	return false
}

func retryLine(st Styles, say l10n.Printer, r state.Retry, barW int, short, afterFailure bool) string {
	n := fmt.Sprintf("#%-3d", r.Reconcile)
	if r.Reconcile == 0 {
		n = "    "
	}
	result := fmt.Sprintf("%-7s", shortResult[r.Result])
	if r.Delay <= 0 {
		note := say.Text("no retry")
		switch r.Result {
		case "success":
			note = say.Text("done, no retry")
			if afterFailure {
				note = say.Text("done: Forget reset the failures")
			}
		case "terminal":
			note = say.Text("terminal: never retried")
		}
		return st.Faint.Render(n) + " " + st.Result(r.Result).Render(result) + st.Faint.Render(fmt.Sprintf(" %6s %s", "—", note))
	}
	glyph := map[state.Chooser]string{state.ChosenByRateLimiter: "█", state.ChosenByRequeueAfter: "▓", state.ChosenByLesson: "▒"}[r.By]
	bar := strings.Repeat(glyph, logBar(r.Delay, barW))
	who := chooserLabel(say, r, short)
	return st.Faint.Render(n) + " " + st.Result(r.Result).Render(result) + fmt.Sprintf(" %6s ", formatDuration(r.Delay)) +
		st.Chooser(r.By).Render(fmt.Sprintf("%-*s", barW, bar)) + " " + st.Chooser(r.By).Render(who)
}

// labelSep parts a chooser's name from its count.
const labelSep = "·"

// chooserName names who chose a delay, in the view's language; the
// names that are the code's (RequeueAfter) stay as they are.
func chooserName(say l10n.Printer, c state.Chooser) string {
	switch c {
	case state.ChosenByRateLimiter:
		return say.Text("rate limiter")
	case state.ChosenByLesson:
		return say.Text("lesson backoff")
	}
	return string(c)
}

// chooserLabel names who chose a retry's delay, and which failure or
// attempt it was.
func chooserLabel(say l10n.Printer, r state.Retry, short bool) string {
	if r.Delay <= 0 {
		return ""
	}
	name := chooserName(say, r.By)
	if short {
		name = map[state.Chooser]string{state.ChosenByRateLimiter: say.Text("limiter"), state.ChosenByRequeueAfter: "After", state.ChosenByLesson: say.Text("lesson")}[r.By]
	}
	switch {
	case r.LimiterWait && short:
		name += say.Text(" lim")
	case r.LimiterWait:
		name += say.Text(" · limiter wait")
	case r.RestOfWait && short:
		name += say.Text(" rest")
	case r.RestOfWait:
		name += say.Text(" · rest of the wait")
	case r.By == state.ChosenByRateLimiter && r.Failures > 0 && short:
		name += fmt.Sprintf(" #%d", r.Failures)
	case r.By == state.ChosenByRateLimiter && r.Failures > 0:
		name += say.Textf(" · failure %d", r.Failures)
	case r.By == state.ChosenByLesson && r.Attempt > 0 && short:
		name += fmt.Sprintf(" #%d", r.Attempt)
	case r.By == state.ChosenByLesson && r.Attempt > 0:
		name += say.Textf(" · attempt %d", r.Attempt)
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

func truncate(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	if n <= 1 {
		return string([]rune(s)[:n])
	}
	return string([]rune(s)[:n-1]) + "…"
}
