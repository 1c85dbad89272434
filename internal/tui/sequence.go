package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/operator-lab/lab/internal/tui/state"
	"github.com/operator-lab/lab/observe"
)

// sequenceLines draws reconciles as sequence diagrams over the five lanes,
// newest at the bottom; or, when a reconcile is pinned with [ and ], that
// reconcile first.
func (m Model) sequenceLines(w, h int) []string {
	st := m.st
	x := lanePositions(w)
	head := newLaneRow(w, &x)
	for i := range head.runes {
		head.runes[i], head.paints[i] = ' ', paintPlain
	}
	for i, name := range laneNames {
		head.text(x[i]-1, name, paintLane+paint(i))
	}
	lines := []string{head.render(&m.paints)}
	avail := h - 1
	if avail <= 0 {
		return lines
	}
	n := m.state.ReconcileCount()
	if n == 0 {
		hint := "No reconcile yet."
		if m.replay != nil {
			hint += " Press → to replay the trace event by event, ] to jump a whole reconcile."
		} else {
			hint += " Create an object (c) and watch its reconcile appear here."
		}
		lines = append(lines, "", "  "+st.Faint.Render(hint), "")
		if m.paused || m.replay != nil {
			lines = append(lines, m.heldBlocks(w, &x)...)
		}
		return lines
	}

	if m.pinned != 0 {
		var blocks []string
		for i := 0; i < n && len(blocks) < avail; i++ {
			r := m.state.ReconcileAt(i)
			if r.N < m.pinned {
				continue
			}
			blocks = append(blocks, m.reconcileBlock(r, w, &x, avail-len(blocks), r.N == m.pinned)...)
		}
		return append(lines, blocks[:min(len(blocks), avail)]...)
	}

	// Follow: keys held at a paused gate at the bottom, then fill from the
	// newest reconcile upwards.
	var held []string
	if m.paused || m.replay != nil {
		held = m.heldBlocks(w, &x)
		if len(held) > avail {
			held = held[len(held)-avail:]
		}
	}
	var blocks [][]string
	used := len(held)
	for i := n - 1; i >= 0 && used < avail; i-- {
		b := m.reconcileBlock(m.state.ReconcileAt(i), w, &x, avail-used, false)
		blocks = append(blocks, b)
		used += len(b)
	}
	for i := len(blocks) - 1; i >= 0; i-- {
		lines = append(lines, blocks[i]...)
	}
	return append(lines, held...)
}

// reconcileBlock draws one reconcile in at most max lines, dropping middle
// steps (with a "… n more" line) when it does not fit.
func (m Model) reconcileBlock(r *state.Reconcile, w int, x *[laneCount]int, maxLines int, pinned bool) []string {
	if maxLines <= 0 {
		return nil
	}
	title := m.reconcileTitle(r, w, pinned)
	var rows []laneRow

	// 1–2. What put the key in the queue, and the dequeue.
	rows = append(rows, queueRows(w, x, r.Key, r.Trigger, r.Adds, r.AddCount, r.Get, "")...)
	// 3. What it did.
	steps := make([]laneRow, 0, len(r.Steps))
	for _, e := range r.Steps {
		lr := newLaneRow(w, x)
		m.drawStep(lr, e)
		steps = append(steps, lr)
	}
	// 4. The result and what the queue did with it.
	var tail []laneRow
	if r.End == nil {
		lr := newLaneRow(w, x)
		lr.note(laneReconcile, "running… "+formatDuration(r.Duration(m.now())), paintWarn)
		tail = append(tail, lr)
	} else {
		lr := newLaneRow(w, x)
		lr.arrow(laneReconcile, laneQueue, resultLabel(r.End), resultPaint(r.End.Result))
		tail = append(tail, lr)
		lr2 := newLaneRow(w, x)
		lr2.note(laneQueue, outcomeLabel(r), resultPaint(r.End.Result))
		tail = append(tail, lr2)
	}

	budget := maxLines - 1 - len(rows) - len(tail)
	if budget < 0 {
		// Not even the frame fits: the title alone says what happened.
		return []string{title}
	}
	if len(steps) > budget || r.StepsDropped > 0 {
		hidden := len(steps) + r.StepsDropped
		keep := max(budget-1, 0)
		steps = steps[:min(keep, len(steps))]
		hidden -= len(steps)
		if budget > 0 && hidden > 0 {
			lr := newLaneRow(w, x)
			lr.note(laneReconcile, fmt.Sprintf("… %d more step(s)", hidden), paintFaint)
			steps = append(steps, lr)
		}
	}
	rows = append(rows, steps...)
	rows = append(rows, tail...)
	out := make([]string, 0, len(rows)+1)
	out = append(out, title)
	for _, lr := range rows {
		out = append(out, lr.render(&m.paints))
	}
	return out
}

// queueRows draws how a key came through the queue: the watch event (or
// the requeue) that added it, and the dequeue that hands it to Reconcile.
func queueRows(w int, x *[laneCount]int, key string, trigger *observe.Event, adds []observe.Event, addCount int, get *observe.Event, afterGet string) []laneRow {
	var rows []laneRow
	switch {
	case trigger != nil:
		lr := newLaneRow(w, x)
		var end int
		if trigger.Key != key {
			// An owned object (a Secret, a StatefulSet) changed and its
			// owner was queued: name the kind that changed.
			end = lr.arrowFit(laneWatch, laneQueue, paintLane+laneWatch, trigger.Type+" "+trigger.Object)
		} else {
			full := strings.TrimSpace(trigger.Type + " " + genLabel(trigger.Generation))
			end = lr.arrowFit(laneWatch, laneQueue, paintLane+laneWatch, full, trigger.Type)
			if !lr.fits(laneWatch, laneQueue, full) && lr.fits(laneWatch, laneQueue, trigger.Type) && trigger.Generation > 0 {
				end = lr.text(end, " "+genLabel(trigger.Generation)+" →", paintLane+laneWatch)
			}
		}
		lr.text(end, " "+addLabel(adds, addCount, trigger), paintLane+laneQueue)
		rows = append(rows, lr)
	case len(adds) > 0:
		lr := newLaneRow(w, x)
		lr.note(laneQueue, addLabel(adds, addCount, nil), paintLane+laneQueue)
		rows = append(rows, lr)
	}
	if get != nil {
		lr := newLaneRow(w, x)
		end := lr.arrow(laneQueue, laneReconcile, "get", paintLane+laneQueue)
		text := " Reconcile(" + shortKey(key) + ")"
		p := paint(paintLane + laneReconcile)
		if afterGet != "" {
			text, p = " "+afterGet, paintWarn
		} else if len(adds) > 0 {
			first := adds[0]
			ready := first.Time.Add(first.Delay.D())
			if waited := get.Time.Sub(ready); waited > 0 {
				text += " waited " + formatDuration(waited)
			}
		}
		lr.text(end, text, p)
		rows = append(rows, lr)
	}
	return rows
}

// heldBlocks draws the keys a worker has dequeued but the paused gate
// holds before Reconcile: what s will let through next.
func (m Model) heldBlocks(w int, x *[laneCount]int) []string {
	var out []string
	for _, d := range m.state.Dequeued() {
		get := d.Get
		why, at := "held at the step-through gate, s lets it run", "❚❚ waiting at the gate"
		if m.replay != nil {
			why, at = "dequeued, its Reconcile starts next", "Reconcile starts next"
		}
		title := m.st.Bold.Render("─ next: "+m.displayKey(d.Key)+" · ") + m.st.Warn.Render(why) + " "
		out = append(out, title+m.st.Border.Render(strings.Repeat("─", max(w-ansi.StringWidth(title), 0))))
		for _, lr := range queueRows(w, x, d.Key, d.Trigger, d.Adds, d.AddCount, &get, at) {
			out = append(out, lr.render(&m.paints))
		}
	}
	return out
}

// reconcileTitle is the rule above a reconcile: number, key, result, duration.
func (m Model) reconcileTitle(r *state.Reconcile, w int, pinned bool) string {
	st := m.st
	left := fmt.Sprintf("─ #%d %s · ", r.N, m.displayKey(r.Key))
	var result string
	if r.End == nil {
		result = st.Warn.Render("running")
	} else {
		result = st.Result(r.End.Result).Render(r.End.Result) + st.Faint.Render(" in "+formatDuration(r.Duration(m.now())))
	}
	text := st.Bold.Render(left) + result + " "
	if pinned {
		text += st.Warn.Render("◆ pinned: ] newer, f follows live ")
	}
	return text + st.Border.Render(strings.Repeat("─", max(w-ansi.StringWidth(text), 0)))
}

func (m Model) drawStep(lr laneRow, e observe.Event) {
	switch e.Kind {
	case observe.KindClient:
		label := strings.TrimSpace(e.Verb + " " + e.Object)
		outcome := outcomeMark(e.Outcome)
		if e.Source == observe.SourceAPI {
			// A failed write says why on the shaft when there is room: the
			// API lane is the last and narrowest.
			if withOutcome := label + " → " + outcome; e.Outcome != "" && e.Outcome != observe.OutcomeOK && lr.fits(laneReconcile, laneAPI, withOutcome) {
				lr.arrow(laneReconcile, laneAPI, withOutcome, outcomePaint(e.Outcome))
				return
			}
			end := lr.arrow(laneReconcile, laneAPI, label, paintLane+laneClient)
			lr.text(end, " "+outcome, outcomePaint(e.Outcome))
			return
		}
		end := lr.arrowFit(laneReconcile, laneClient, paintLane+laneClient, label, e.Verb)
		if !lr.fits(laneReconcile, laneClient, label) && lr.fits(laneReconcile, laneClient, e.Verb) {
			end = lr.text(end, " "+e.Object, paintLane+laneClient)
		}
		end = lr.text(end, " from cache", paintFaint)
		lr.text(end, " "+outcome, outcomePaint(e.Outcome))
	case observe.KindPhase:
		from := e.From
		if from == "" {
			from = "∅"
		}
		lr.note(laneReconcile, "phase "+from+" → "+e.To, paintBold)
	case observe.KindCondition:
		text := fmt.Sprintf("condition %s=%s", e.Type, e.Status)
		if e.Reason != "" {
			text += " (" + e.Reason + ")"
		}
		p := paintOK
		if e.Status != "True" {
			p = paintWarn
		}
		lr.note(laneReconcile, text, p)
	case observe.KindExternal:
		lr.note(laneReconcile, fmt.Sprintf("external %s %s %s", e.Op, outcomeMark(e.Outcome), formatMs(e.LatencyMs)), outcomePaint(e.Outcome))
	case observe.KindBreaker:
		text := fmt.Sprintf("breaker %s → %s", e.From, e.To)
		if e.To == "" {
			text = "breaker"
		}
		lr.note(laneReconcile, fmt.Sprintf("%s (failures %d)", text, e.Failures), paintWarn)
	case observe.KindBackoff:
		lr.note(laneReconcile, fmt.Sprintf("lesson backoff: attempt %d → wait %s", e.Attempt, formatDuration(e.Delay.D())), paintInfo)
	case observe.KindRateLimit:
		text := "rate limiter: allowed at once"
		if e.Wait > 0 {
			text = "rate limiter: wait " + formatDuration(e.Wait.D())
		}
		lr.note(laneReconcile, text, paintWarn)
	default:
		lr.note(laneReconcile, string(e.Kind)+" "+firstNonEmpty(e.Message, e.Name, e.Value), paintFaint)
	}
}

func genLabel(g int64) string {
	if g == 0 {
		return ""
	}
	return fmt.Sprintf("gen %d", g)
}

// addLabel says how the key entered the queue and how many adds merged.
func addLabel(adds []observe.Event, addCount int, trigger *observe.Event) string {
	if len(adds) == 0 {
		return ""
	}
	first := adds[0]
	if trigger != nil {
		for _, a := range adds {
			if a.Cause == trigger.Seq {
				first = a
				break
			}
		}
	}
	var s string
	switch first.Kind {
	case observe.KindQueueAddAfter:
		s = "add_after " + formatDuration(first.Delay.D())
	case observe.KindQueueAddRateLimited:
		s = "add_rate_limited " + formatDuration(first.Delay.D())
	default:
		s = "add"
		if first.Priority != nil && *first.Priority != 0 {
			s += fmt.Sprintf(" prio %d", *first.Priority)
		}
	}
	if addCount > 1 {
		s += fmt.Sprintf(" (+%d merged)", addCount-1)
	}
	return s
}

// resultLabel writes the reconcile's return value the way the code says it.
func resultLabel(e *observe.Event) string {
	switch e.Result {
	case observe.ResultSuccess:
		return "Result{}, nil"
	case observe.ResultRequeue:
		return "Requeue: true"
	case observe.ResultRequeueAfter:
		return "RequeueAfter " + formatDuration(e.RequeueAfter.D())
	case observe.ResultError:
		return "err: " + e.Error
	case observe.ResultTerminal:
		return "TerminalError: " + e.Error
	}
	return e.Result
}

// outcomeLabel says what the work queue did with the result.
func outcomeLabel(r *state.Reconcile) string {
	if len(r.Outcome) == 0 {
		if r.Result() == observe.ResultTerminal {
			return "no requeue, no Forget: terminal errors are not retried"
		}
		if !r.Done {
			return "…"
		}
		return "nothing"
	}
	var parts []string
	for _, e := range r.Outcome {
		switch e.Kind {
		case observe.KindQueueForget:
			parts = append(parts, "Forget (failures reset)")
		case observe.KindQueueAddAfter:
			parts = append(parts, "AddAfter "+formatDuration(e.Delay.D()))
		case observe.KindQueueAddRateLimited:
			parts = append(parts, fmt.Sprintf("AddRateLimited → %s (failure %d)", formatDuration(e.Delay.D()), e.Failures))
		}
	}
	return strings.Join(parts, " + ")
}

func resultPaint(result string) paint {
	switch result {
	case observe.ResultSuccess:
		return paintOK
	case observe.ResultRequeueAfter:
		return paintInfo
	case observe.ResultRequeue:
		return paintWarn
	case observe.ResultError, observe.ResultTerminal:
		return paintBad
	}
	return paintFaint
}

func outcomeMark(outcome string) string {
	switch outcome {
	case "", observe.OutcomeOK:
		return "✓"
	}
	return "✗ " + outcome
}

func outcomePaint(outcome string) paint {
	switch outcome {
	case "", observe.OutcomeOK:
		return paintOK
	case observe.OutcomeNotFound, observe.OutcomeConflict, observe.OutcomeAlreadyExists:
		return paintWarn
	}
	return paintBad
}
