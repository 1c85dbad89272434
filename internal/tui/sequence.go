package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/operator-lab/lab/internal/l10n"
	"github.com/operator-lab/lab/internal/tui/state"
	"github.com/operator-lab/lab/observe"
)

// sequencePane draws reconciles as sequence diagrams over the five lanes
// (Watch, Queue, Reconcile, Client, API), newest at the bottom; or, when a
// reconcile is pinned with [ and ], that reconcile first.
type sequencePane struct {
	c *common
	f *focus
	size
	x [laneCount]int // the lanes' columns, placed in SetSize
}

func (p *sequencePane) Title() string { return p.c.say.Text("Reconcile sequence") }
func (p *sequencePane) Hint() string {
	return p.c.say.Text("why each reconcile ran, what it did, what the queue did next")
}

// SetSize places the lanes for the pane's width.
func (p *sequencePane) SetSize(w, h int) {
	p.size.SetSize(w, h)
	p.x = lanePositions(w)
}

// View draws the lane names, then the reconciles that fit.
func (p *sequencePane) View() []string {
	st, w, h, x := p.c.st, p.width, p.height, &p.x
	paused, _ := p.c.gate()
	head := newLaneRow(w, x)
	for i := range head.runes {
		head.runes[i], head.paints[i] = ' ', paintPlain
	}
	for i, name := range laneNames {
		head.text(x[i]-1, name, paintLane+paint(i))
	}
	lines := []string{head.render(&p.c.paints)}
	avail := h - 1
	if avail <= 0 {
		return lines
	}
	n := p.c.state.ReconcileCount()
	if n == 0 {
		hint := p.c.say.Text("No reconcile yet. Create an object (c) and watch its reconcile appear here.")
		if p.c.replay {
			hint = p.c.say.Text("No reconcile yet. Press → to replay the trace event by event, ] to jump a whole reconcile.")
		}
		lines = append(lines, "", "  "+st.Faint.Render(hint), "")
		if paused || p.c.replay {
			lines = append(lines, p.heldBlocks(paused)...)
		}
		return lines
	}

	if pinned := p.f.pinned; pinned != 0 {
		var blocks []string
		for i := 0; i < n && len(blocks) < avail; i++ {
			r := p.c.state.ReconcileAt(i)
			if r.N < pinned {
				continue
			}
			blocks = append(blocks, p.reconcileBlock(r, avail-len(blocks), r.N == pinned)...)
		}
		return append(lines, blocks[:min(len(blocks), avail)]...)
	}

	// Follow: keys held at a paused gate at the bottom, then fill from the
	// newest reconcile upwards.
	var held []string
	if paused || p.c.replay {
		held = p.heldBlocks(paused)
		if len(held) > avail {
			held = held[len(held)-avail:]
		}
	}
	var blocks [][]string
	used := len(held)
	for i := n - 1; i >= 0 && used < avail; i-- {
		b := p.reconcileBlock(p.c.state.ReconcileAt(i), avail-used, false)
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
func (p *sequencePane) reconcileBlock(r *state.Reconcile, maxLines int, pinned bool) []string {
	if maxLines <= 0 {
		return nil
	}
	say, w, x := p.c.say, p.width, &p.x
	title := p.reconcileTitle(r, pinned)
	var rows []laneRow

	// 1–2. What put the key in the queue, and the dequeue.
	rows = append(rows, queueRows(say, w, x, r.Key, r.Trigger, r.TriggerKeptGeneration, r.Adds, r.AddCount, r.Get, "")...)
	// 3. What it did.
	steps := make([]laneRow, 0, len(r.Steps))
	for _, e := range r.Steps {
		lr := newLaneRow(w, x)
		drawStep(say, lr, e)
		steps = append(steps, lr)
	}
	// 4. The result and what the queue did with it.
	var tail []laneRow
	if r.End == nil {
		lr := newLaneRow(w, x)
		lr.note(laneReconcile, say.Textf("running… %s", formatDuration(r.Duration(p.c.now()))), paintWarn)
		tail = append(tail, lr)
	} else {
		lr := newLaneRow(w, x)
		lr.arrow(laneReconcile, laneQueue, resultLabel(r.End), resultPaint(r.End.Result))
		tail = append(tail, lr)
		lr2 := newLaneRow(w, x)
		lr2.note(laneQueue, outcomeLabel(say, r), resultPaint(r.End.Result))
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
			lr.note(laneReconcile, say.Count(hidden, "… %d more step(s)", "… %d more step(s)"), paintFaint)
			steps = append(steps, lr)
		}
	}
	rows = append(rows, steps...)
	rows = append(rows, tail...)
	out := make([]string, 0, len(rows)+1)
	out = append(out, title)
	for _, lr := range rows {
		out = append(out, lr.render(&p.c.paints))
	}
	return out
}

// queueRows draws how a key came through the queue: the watch event (or
// the requeue) that added it, and the dequeue that hands it to Reconcile.
// keptGeneration marks a trigger that left the generation as it was (a
// status or metadata write), so a reconcile it causes is not mistaken
// for a reaction to a spec change.
func queueRows(say l10n.Printer, w int, x *[laneCount]int, key string, trigger *observe.Event, keptGeneration bool, adds []observe.Event, addCount int, get *observe.Event, afterGet string) []laneRow {
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
			gen := genLabel(trigger.Generation)
			if keptGeneration && gen != "" {
				gen = say.Textf("%s unchanged", gen)
			}
			full := strings.TrimSpace(trigger.Type + " " + gen)
			end = lr.arrowFit(laneWatch, laneQueue, paintLane+laneWatch, full, trigger.Type)
			if !lr.fits(laneWatch, laneQueue, full) && lr.fits(laneWatch, laneQueue, trigger.Type) && trigger.Generation > 0 {
				end = lr.text(end, " "+gen+" →", paintLane+laneWatch)
			}
		}
		lr.text(end, " "+addLabel(say, adds, addCount, trigger), paintLane+laneQueue)
		rows = append(rows, lr)
	case len(adds) > 0:
		lr := newLaneRow(w, x)
		lr.note(laneQueue, addLabel(say, adds, addCount, nil), paintLane+laneQueue)
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
				text += say.Textf(" waited %s", formatDuration(waited))
			}
		}
		lr.text(end, text, p)
		rows = append(rows, lr)
	}
	return rows
}

// heldBlocks draws the keys a worker has dequeued but whose reconcile has
// not started: what a paused gate holds (and s lets through next), or in
// a replay what starts next.
func (p *sequencePane) heldBlocks(paused bool) []string {
	st, say, w := p.c.st, p.c.say, p.width
	why, at := say.Text("dequeued, its Reconcile starts next"), say.Text("Reconcile starts next")
	switch {
	case paused && !p.c.replay:
		why, at = say.Text("held at the step-through gate, s lets it run"), say.Text("❚❚ waiting at the gate")
	case paused:
		why, at = say.Text("held at the step-through gate"), say.Text("❚❚ waiting at the gate")
	}
	var out []string
	for _, d := range p.c.state.Dequeued() {
		get := d.Get
		title := st.Bold.Render(say.Textf("─ next: %s · ", p.c.displayKey(d.Key))) + st.Warn.Render(why) + " "
		out = append(out, title+st.Border.Render(strings.Repeat("─", max(w-ansi.StringWidth(title), 0))))
		for _, lr := range queueRows(say, w, &p.x, d.Key, d.Trigger, false, d.Adds, d.AddCount, &get, at) {
			out = append(out, lr.render(&p.c.paints))
		}
	}
	return out
}

// reconcileTitle is the rule above a reconcile: number, key, result, duration.
func (p *sequencePane) reconcileTitle(r *state.Reconcile, pinned bool) string {
	st, say, w := p.c.st, p.c.say, p.width
	left := fmt.Sprintf("─ #%d %s · ", r.N, p.c.displayKey(r.Key))
	var result string
	if r.End == nil {
		result = st.Warn.Render(say.Text("running"))
	} else {
		result = st.Result(r.End.Result).Render(r.End.Result) + st.Faint.Render(say.Textf(" in %s", formatDuration(r.Duration(p.c.now()))))
	}
	text := st.Bold.Render(left) + result + " "
	if pinned {
		text += st.Warn.Render(say.Text("◆ pinned: ] newer, f follows live "))
	}
	return text + st.Border.Render(strings.Repeat("─", max(w-ansi.StringWidth(text), 0)))
}

func drawStep(say l10n.Printer, lr laneRow, e observe.Event) {
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
		end = lr.text(end, say.Text(" from cache"), paintFaint)
		lr.text(end, " "+outcome, outcomePaint(e.Outcome))
	case observe.KindPhase:
		from := e.From
		if from == "" {
			from = "∅"
		}
		lr.note(laneReconcile, say.Textf("phase %s → %s", from, e.To), paintBold)
	case observe.KindCondition:
		text := say.Textf("condition %s=%s", e.Type, e.Status)
		if e.Reason != "" {
			text += " (" + e.Reason + ")"
		}
		p := paintOK
		if e.Status != "True" {
			p = paintWarn
		}
		lr.note(laneReconcile, text, p)
	case observe.KindExternal:
		lr.note(laneReconcile, say.Textf("external %s %s %s", e.Op, outcomeMark(e.Outcome), formatMs(e.LatencyMs)), outcomePaint(e.Outcome))
	case observe.KindBreaker:
		lr.note(laneReconcile, breakerStep(say, e), paintWarn)
	case observe.KindBackoff:
		lr.note(laneReconcile, say.Textf("lesson backoff: attempt %d → wait %s", e.Attempt, formatDuration(e.Delay.D())), paintInfo)
	case observe.KindRateLimit:
		lr.note(laneReconcile, rateLimitStep(say, e), paintWarn)
	default:
		lr.note(laneReconcile, string(e.Kind)+" "+firstNonEmpty(e.Message, e.Name, e.Value), paintFaint)
	}
}
