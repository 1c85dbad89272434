package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/operator-lab/lab/internal/l10n"
	"github.com/operator-lab/lab/internal/tui/state"
	"github.com/operator-lab/lab/observe"
)

// detailLayer is one reconcile in full, over the whole body: what caused
// it, every step it took in the trace's words (observe's one formatter),
// its Result with the error's whole text and the chain of errors it wraps,
// and what the work queue did with it — wrapped to the width, never cut,
// and scrolled when it is longer than the screen.
//
// A component of the root, which opens it on the reconcile the sequence
// pane points at (pinned, else the selected object's newest, else the
// newest), routes it every key while it is open (like the help, nothing
// acts behind it), and has it rebuild its lines when events or ticks may
// have changed what it shows (refresh), so View only draws.
type detailLayer struct {
	c     *common
	f     *focus
	keys  detailKeys
	under layer // what closing it shows again
	n     int   // the number of the reconcile shown

	width, height int      // the body's
	lines         []string // the content, wrapped to the inside of the frame
	built         detailBuilt
	offset        int // the first content line shown
}

// detailBuilt is what the lines were built from: when none of it changed,
// neither did they.
type detailBuilt struct {
	r                          *state.Reconcile
	steps, dropped, outcomes   int
	ended, done, held, running bool
	width                      int
}

// detailKeys open the detail (enter, from the dashboard) and, while it is
// open, scroll it and close it.
type detailKeys struct {
	Open             key.Binding
	Close            key.Binding
	Up, Down         key.Binding
	PageUp, PageDown key.Binding
	Top, Bottom      key.Binding
}

func newDetailKeys(say l10n.Printer) detailKeys {
	return detailKeys{
		Open:     bind([]string{"enter"}, "enter", say.Text("detail")),
		Close:    bind([]string{"esc"}, "esc", say.Text("back")),
		Up:       bind([]string{"up", "k"}, "↑/k", say.Text("scroll up")),
		Down:     bind([]string{"down", "j"}, "↓/j", say.Text("scroll down")),
		PageUp:   bind([]string{"pgup"}, "pgup", say.Text("page up")),
		PageDown: bind([]string{"pgdown", " "}, "pgdn", say.Text("page down")),
		Top:      bind([]string{"home", "g"}, "g", say.Text("top")),
		Bottom:   bind([]string{"end", "G"}, "G", say.Text("bottom")),
	}
}

func newDetailLayer(c *common, f *focus) *detailLayer {
	return &detailLayer{c: c, f: f, keys: newDetailKeys(c.say)}
}

// configure enables enter while the detail is closed and the keys that
// scroll and close it while it is open.
func (d *detailLayer) configure(open bool) {
	k := &d.keys
	k.Open.SetEnabled(!open)
	for _, b := range []*key.Binding{&k.Close, &k.Up, &k.Down, &k.PageUp, &k.PageDown, &k.Top, &k.Bottom} {
		b.SetEnabled(open)
	}
}

// target is the reconcile enter opens: the one pinned in the sequence
// pane, else the newest of the selected object, else the newest of all.
func (d *detailLayer) target() (*state.Reconcile, bool) {
	s := d.c.state
	if d.f.pinned != 0 {
		if r, ok := s.ReconcileByN(d.f.pinned); ok {
			return r, true
		}
	}
	if d.f.selected != "" {
		if r, ok := s.LastReconcileOf(d.f.selected); ok {
			return r, true
		}
	}
	return s.LastReconcile()
}

// show opens on the reconcile enter points at; false when there is none.
func (d *detailLayer) show() bool {
	r, ok := d.target()
	if !ok {
		return false
	}
	d.n, d.offset, d.built = r.N, 0, detailBuilt{}
	d.refresh()
	return true
}

// SetSize gives the layer the body's size.
func (d *detailLayer) SetSize(w, h int) {
	d.width, d.height = w, h
	d.refresh()
}

// innerWidth is the text's width inside the frame and its margin.
func (d *detailLayer) innerWidth() int { return max(d.width-4, 10) }

// rows is how many content lines fit inside the frame, below which one
// line says where the view is when it scrolls.
func (d *detailLayer) rows() int { return max(d.height-3, 1) }

// refresh rebuilds the lines when what they show changed.
func (d *detailLayer) refresh() {
	if d.n == 0 {
		return
	}
	r, held := d.c.state.ReconcileByN(d.n)
	b := detailBuilt{r: r, held: held, width: d.innerWidth()}
	if held {
		b.steps, b.dropped, b.outcomes = len(r.Steps), r.StepsDropped, len(r.Outcome)
		b.ended, b.done, b.running = r.End != nil, r.Done, r.End == nil
	}
	if b == d.built && !b.running { // a running one says for how long
		return
	}
	d.built = b
	d.lines = d.build(r, held)
	d.scroll(0)
}

// Update takes a key while the layer is open; closed reports that it was
// the one that closes it. Every other key is swallowed.
func (d *detailLayer) Update(msg tea.Msg) (closed bool) {
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		return false
	}
	switch k := d.keys; {
	case key.Matches(km, k.Close):
		return true
	case key.Matches(km, k.Up):
		d.scroll(-1)
	case key.Matches(km, k.Down):
		d.scroll(1)
	case key.Matches(km, k.PageUp):
		d.scroll(-d.rows())
	case key.Matches(km, k.PageDown):
		d.scroll(d.rows())
	case key.Matches(km, k.Top):
		d.offset = 0
	case key.Matches(km, k.Bottom):
		d.scroll(len(d.lines))
	}
	return false
}

// scroll moves the first line shown by n, within the content.
func (d *detailLayer) scroll(n int) {
	d.offset = min(max(d.offset+n, 0), max(len(d.lines)-d.rows(), 0))
}

func (d *detailLayer) ShortHelp() []key.Binding {
	k := d.keys
	say := d.c.say
	return []key.Binding{k.Close, helpOnly(k.Down, "↑/↓", say.Text("scroll")), helpOnly(k.PageDown, "pgup/pgdn", say.Text("page"))}
}

func (d *detailLayer) FullHelp() [][]key.Binding {
	k := d.keys
	return [][]key.Binding{{k.Close, k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}}
}

// View draws the lines in view in a frame over the body.
func (d *detailLayer) View() string {
	st, say := d.c.st, d.c.say
	title := st.PaneTitle.Render(say.Textf("Reconcile #%d in full", d.n)) + st.PaneHint.Render(" · "+say.Text("esc returns"))
	rows := d.rows()
	end := min(d.offset+rows, len(d.lines))
	out := make([]string, 0, rows+1)
	for _, l := range d.lines[d.offset:end] {
		out = append(out, " "+l)
	}
	for len(out) < rows {
		out = append(out, "")
	}
	if len(d.lines) > rows {
		out = append(out, " "+st.Faint.Render(say.Textf("lines %d–%d of %d · ↑/↓ pgup/pgdn scroll", d.offset+1, end, len(d.lines))))
	}
	return drawFrame(st.BorderFocus, title, out, d.width, d.height)
}

// build writes the reconcile out in full, wrapped to the inner width.
func (d *detailLayer) build(r *state.Reconcile, held bool) []string {
	st, say, w := d.c.st, d.c.say, d.innerWidth()
	var out []string
	// para wraps text to the width, its first line after lead and the
	// others under it; ink styles the text.
	para := func(lead string, text string, ink Ink) {
		indent := strings.Repeat(" ", ansi.StringWidth(lead))
		wrapped := strings.Split(ansi.Wrap(text, max(w-len(indent), 8), ""), "\n")
		for i, l := range wrapped {
			first := indent
			if i == 0 {
				first = lead
			}
			out = append(out, first+ink.Render(l))
		}
	}
	heading := func(text string) {
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, st.Bold.Render(text))
	}
	if !held {
		para("", say.Textf("Reconcile #%d is no longer held: the view keeps the last %d reconciles.", d.n, d.c.state.Limits().Reconciles), st.Warn)
		return out
	}
	start := r.Start.Time
	// when places an event in time against the reconcile's start.
	when := func(e observe.Event) string {
		if off := e.Time.Sub(start); off >= 0 {
			return "+" + formatDuration(off)
		}
		return "-" + formatDuration(start.Sub(e.Time))
	}
	// event writes one event in the trace's words, with when it happened.
	event := func(e observe.Event, note string) {
		text := e.Brief()
		if note != "" {
			text += " — " + note
		}
		lead := "  " + padRight(when(e), 8) + " "
		para(st.Faint.Render(lead), text, st.Plain)
	}

	// The reconcile itself.
	summary := fmt.Sprintf("#%d %s · %s", r.N, r.Key, r.Controller)
	if r.Controller == "" {
		summary = fmt.Sprintf("#%d %s", r.N, r.Key)
	}
	if r.ID != "" {
		summary += " · id " + r.ID
	}
	para("", summary, st.Bold)
	para("", say.Textf("started %s; the times below are from this start", start.Format("15:04:05.000")), st.Faint)

	heading(say.Text("Why it ran"))
	if t := r.Trigger; t != nil {
		note := ""
		switch {
		case t.Key != r.Key:
			note = say.Text("an object it owns changed, so its owner was queued")
		case r.TriggerKeptGeneration:
			note = say.Text("the generation did not change: a write of status or metadata (often this controller's own), not of the spec")
		}
		event(*t, note)
	}
	for _, add := range r.Adds {
		note := ""
		if by, ok := d.c.state.RequeuedBy(add); ok {
			note = say.Textf("asked for by reconcile #%d", by.N)
		}
		event(add, note)
	}
	if r.Trigger == nil {
		para("  ", say.Text("no watch event is known for it (a requeue, or the event is no longer held)"), st.Faint)
	}
	if more := r.AddCount - len(r.Adds); more > 0 {
		para("  ", say.Count(more, "%d more adds merged into this reconcile (not kept)", "%d more adds merged into this reconcile (not kept)"), st.Faint)
	}
	if r.Get != nil {
		note := say.Text("a worker took the key")
		if waited, ok := r.Waited(); ok {
			note = say.Textf("a worker took the key after it waited %s", formatDuration(waited))
		}
		event(*r.Get, note)
	}
	event(r.Start, "")

	heading(say.Text("What it did"))
	if len(r.Steps) == 0 && r.StepsDropped == 0 {
		para("  ", say.Text("nothing between start and end"), st.Faint)
	}
	for _, e := range r.Steps {
		event(e, "")
	}
	if r.StepsDropped > 0 {
		para("  ", say.Count(r.StepsDropped, "… %d more steps happened; the view keeps the first %d of a reconcile", "… %d more steps happened; the view keeps the first %d of a reconcile", d.c.state.Limits().StepsPerReconcile), st.Faint)
	}

	heading(say.Text("Result"))
	label := func(text string) string { return "  " + padRight(text, 10) }
	if r.End == nil {
		para("  ", say.Textf("still running, for %s so far", formatDuration(r.Duration(d.c.now()))), st.Warn)
	} else {
		ink := st.Result(r.End.Result)
		para(label(say.Text("returned")), resultName(r.End, say), ink)
		para(label(say.Text("took")), formatDuration(r.Duration(d.c.now())), st.Plain)
		if r.End.Error != "" {
			para(label(say.Text("error")), r.End.Error, ink)
			// Go wraps errors as "context: cause"; each layer on a line of
			// its own, under the one that wraps it, shows the chain.
			if chain := strings.Split(r.End.Error, ": "); len(chain) > 1 {
				para(label(say.Text("chain")), chain[0], st.Faint)
				for i, layer := range chain[1:] {
					para(label("")+strings.Repeat("  ", i)+"└ ", layer, st.Faint)
				}
			}
		}
	}

	heading(say.Text("What the work queue did"))
	switch r.End {
	case nil:
		para("  ", say.Text("nothing yet: Reconcile has not returned"), st.Faint)
	default:
		para("  ", outcomeLabel(say, r), st.Result(r.End.Result))
		for _, e := range r.Outcome {
			event(e, "")
		}
		if r.Done {
			para("  ", say.Text("queue.Done: the worker let go of the key"), st.Faint)
		} else {
			para("  ", say.Text("no queue.Done yet: the worker still holds the key"), st.Faint)
		}
	}
	return out
}

// resultName is what Reconcile returned, as Go code says it; the error's
// text has a line of its own.
func resultName(e *observe.Event, say l10n.Printer) string {
	switch e.Result {
	case observe.ResultSuccess:
		return "Result{}, nil"
	case observe.ResultRequeue:
		return "Result{Requeue: true}, nil"
	case observe.ResultRequeueAfter:
		return "Result{RequeueAfter: " + formatDuration(e.RequeueAfter.D()) + "}, nil"
	case observe.ResultError, observe.ResultTerminal:
		text := say.Text("an error")
		if e.Result == observe.ResultTerminal {
			text = say.Text("a TerminalError: not retried")
		}
		if e.RequeueAfter > 0 {
			text += say.Textf(" (the RequeueAfter %s beside it is ignored)", formatDuration(e.RequeueAfter.D()))
		}
		return text
	}
	return e.Result
}

// noReconcile is what enter says before any reconcile.
func (d *detailLayer) noReconcile() string {
	return d.c.say.Text("no reconcile yet, so none to show in full")
}
