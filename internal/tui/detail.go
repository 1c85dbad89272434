package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

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
	lang  string // of the UI's own text: the lesson pane's
	under layer  // what closing it shows again
	n     int    // the number of the reconcile shown

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

func newDetailKeys() detailKeys {
	return detailKeys{
		Open:     bind([]string{"enter"}, "enter", "detail"),
		Close:    bind([]string{"esc"}, "esc", "back"),
		Up:       bind([]string{"up", "k"}, "↑/k", "scroll up"),
		Down:     bind([]string{"down", "j"}, "↓/j", "scroll down"),
		PageUp:   bind([]string{"pgup"}, "pgup", "page up"),
		PageDown: bind([]string{"pgdown", " "}, "pgdn", "page down"),
		Top:      bind([]string{"home", "g"}, "g", "top"),
		Bottom:   bind([]string{"end", "G"}, "G", "bottom"),
	}
}

var (
	phraseDetailTitle = phrase{en: "Reconcile #%d in full", ru: "Reconcile #%d целиком"}
	phraseDetailHint  = phrase{en: "esc returns", ru: "esc — назад"}
	phraseDetailGone  = phrase{en: "Reconcile #%d is no longer held: the view keeps the last %d reconciles.",
		ru: "Reconcile #%d уже не хранится: видны последние %d."}
	phraseNoReconcile = phrase{en: "no reconcile yet, so none to show in full", ru: "reconcile ещё не было — показывать нечего"}

	phraseWhyItRan       = phrase{en: "Why it ran", ru: "Почему он запустился"}
	phraseWhatItDid      = phrase{en: "What it did", ru: "Что он сделал"}
	phraseResult         = phrase{en: "Result", ru: "Результат"}
	phraseQueueDid       = phrase{en: "What the work queue did", ru: "Что сделала очередь"}
	phraseStarted        = phrase{en: "started %s; the times below are from this start", ru: "начат в %s; время ниже — от этого начала"}
	phraseOwned          = phrase{en: "an object it owns changed, so its owner was queued", ru: "изменился объект, которым он владеет, — в очередь встал владелец"}
	phraseAskedBy        = phrase{en: "asked for by reconcile #%d", ru: "запрошено reconcile #%d"}
	phraseNoCause        = phrase{en: "no watch event is known for it (a requeue, or the event is no longer held)", ru: "событие watch для него неизвестно (повтор, или событие уже не хранится)"}
	phraseMoreAdds       = phrase{en: "%d more adds merged into this reconcile (not kept)", ru: "ещё %d добавлений слились в этот reconcile (не сохранены)"}
	phraseDequeued       = phrase{en: "a worker took the key after it waited %s", ru: "воркер взял ключ, прождавший %s"}
	phraseTaken          = phrase{en: "a worker took the key", ru: "воркер взял ключ"}
	phraseNoSteps        = phrase{en: "nothing between start and end", ru: "между началом и концом — ничего"}
	phraseMoreSteps      = phrase{en: "… %d more steps happened; the view keeps the first %d of a reconcile", ru: "… ещё %d шагов; видны первые %d шагов reconcile"}
	phraseRunning        = phrase{en: "still running, for %s so far", ru: "ещё выполняется, уже %s"}
	phraseReturned       = phrase{en: "returned", ru: "вернул"}
	phraseTook           = phrase{en: "took", ru: "длился"}
	phraseError          = phrase{en: "error", ru: "ошибка"}
	phraseChain          = phrase{en: "chain", ru: "цепочка"}
	phraseNone           = phrase{}
	phraseAnError        = phrase{en: "an error", ru: "ошибку"}
	phraseATerminalError = phrase{en: "a TerminalError: not retried", ru: "TerminalError: без повторов"}
	phraseIgnoredAfter   = phrase{en: " (the RequeueAfter %s beside it is ignored)", ru: " (RequeueAfter %s рядом с ней не учитывается)"}
	phraseNotYet         = phrase{en: "nothing yet: Reconcile has not returned", ru: "пока ничего: Reconcile не вернул результат"}
	phraseDone           = phrase{en: "queue.Done: the worker let go of the key", ru: "queue.Done: воркер отпустил ключ"}
	phraseNotDone        = phrase{en: "no queue.Done yet: the worker still holds the key", ru: "queue.Done ещё не было: воркер держит ключ"}
	phraseScrollMore     = phrase{en: "lines %d–%d of %d · ↑/↓ pgup/pgdn scroll", ru: "строки %d–%d из %d · ↑/↓ pgup/pgdn — прокрутка"}
)

func newDetailLayer(c *common, f *focus, lang string) *detailLayer {
	return &detailLayer{c: c, f: f, lang: lang, keys: newDetailKeys()}
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
	return []key.Binding{k.Close, helpOnly(k.Down, "↑/↓", "scroll"), helpOnly(k.PageDown, "pgup/pgdn", "page")}
}

func (d *detailLayer) FullHelp() [][]key.Binding {
	k := d.keys
	return [][]key.Binding{{k.Close, k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}}
}

// View draws the lines in view in a frame over the body.
func (d *detailLayer) View() string {
	st, lang := d.c.st, d.lang
	title := st.PaneTitle.Render(fmt.Sprintf(phraseDetailTitle.in(lang), d.n)) + st.PaneHint.Render(" · "+phraseDetailHint.in(lang))
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
		out = append(out, " "+st.Faint.Render(fmt.Sprintf(phraseScrollMore.in(lang), d.offset+1, end, len(d.lines))))
	}
	return drawFrame(st.BorderFocus, title, out, d.width, d.height)
}

// build writes the reconcile out in full, wrapped to the inner width.
func (d *detailLayer) build(r *state.Reconcile, held bool) []string {
	st, lang, w := d.c.st, d.lang, d.innerWidth()
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
	heading := func(p phrase) {
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, st.Bold.Render(p.in(lang)))
	}
	if !held {
		para("", fmt.Sprintf(phraseDetailGone.in(lang), d.n, d.c.state.Limits().Reconciles), st.Warn)
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
	para("", fmt.Sprintf(phraseStarted.in(lang), start.Format("15:04:05.000")), st.Faint)

	heading(phraseWhyItRan)
	if t := r.Trigger; t != nil {
		note := ""
		if t.Key != r.Key {
			note = phraseOwned.in(lang)
		}
		event(*t, note)
	}
	for _, add := range r.Adds {
		note := ""
		if by, ok := d.c.state.RequeuedBy(add); ok {
			note = fmt.Sprintf(phraseAskedBy.in(lang), by.N)
		}
		event(add, note)
	}
	if r.Trigger == nil {
		para("  ", phraseNoCause.in(lang), st.Faint)
	}
	if more := r.AddCount - len(r.Adds); more > 0 {
		para("  ", fmt.Sprintf(phraseMoreAdds.in(lang), more), st.Faint)
	}
	if r.Get != nil {
		note := phraseTaken.in(lang)
		if waited, ok := r.Waited(); ok {
			note = fmt.Sprintf(phraseDequeued.in(lang), formatDuration(waited))
		}
		event(*r.Get, note)
	}
	event(r.Start, "")

	heading(phraseWhatItDid)
	if len(r.Steps) == 0 && r.StepsDropped == 0 {
		para("  ", phraseNoSteps.in(lang), st.Faint)
	}
	for _, e := range r.Steps {
		event(e, "")
	}
	if r.StepsDropped > 0 {
		para("  ", fmt.Sprintf(phraseMoreSteps.in(lang), r.StepsDropped, d.c.state.Limits().StepsPerReconcile), st.Faint)
	}

	heading(phraseResult)
	label := func(p phrase) string { return "  " + padRight(p.in(lang), 10) }
	if r.End == nil {
		para("  ", fmt.Sprintf(phraseRunning.in(lang), formatDuration(r.Duration(d.c.now()))), st.Warn)
	} else {
		ink := st.Result(r.End.Result)
		para(label(phraseReturned), resultName(r.End, lang), ink)
		para(label(phraseTook), formatDuration(r.Duration(d.c.now())), st.Plain)
		if r.End.Error != "" {
			para(label(phraseError), r.End.Error, ink)
			// Go wraps errors as "context: cause"; each layer on a line of
			// its own, under the one that wraps it, shows the chain.
			if chain := strings.Split(r.End.Error, ": "); len(chain) > 1 {
				para(label(phraseChain), chain[0], st.Faint)
				for i, layer := range chain[1:] {
					para(label(phraseNone)+strings.Repeat("  ", i)+"└ ", layer, st.Faint)
				}
			}
		}
	}

	heading(phraseQueueDid)
	switch {
	case r.End == nil:
		para("  ", phraseNotYet.in(lang), st.Faint)
	default:
		para("  ", outcomeLabel(r), st.Result(r.End.Result))
		for _, e := range r.Outcome {
			event(e, "")
		}
		if r.Done {
			para("  ", phraseDone.in(lang), st.Faint)
		} else {
			para("  ", phraseNotDone.in(lang), st.Faint)
		}
	}
	return out
}

// resultName is what Reconcile returned, as Go code says it; the error's
// text has a line of its own.
func resultName(e *observe.Event, lang string) string {
	switch e.Result {
	case observe.ResultSuccess:
		return "Result{}, nil"
	case observe.ResultRequeue:
		return "Result{Requeue: true}, nil"
	case observe.ResultRequeueAfter:
		return "Result{RequeueAfter: " + formatDuration(e.RequeueAfter.D()) + "}, nil"
	case observe.ResultError, observe.ResultTerminal:
		p := phraseAnError
		if e.Result == observe.ResultTerminal {
			p = phraseATerminalError
		}
		text := p.in(lang)
		if e.RequeueAfter > 0 {
			text += fmt.Sprintf(phraseIgnoredAfter.in(lang), formatDuration(e.RequeueAfter.D()))
		}
		return text
	}
	return e.Result
}
