package tui

import (
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/operator-lab/lab/internal/tui/state"
	"github.com/operator-lab/lab/observe"
)

// replayEvery is the pace of replay's play mode.
const replayEvery = 120 * time.Millisecond

// replay walks a recorded trace. The state always holds exactly the first
// cursor events: forward applies more, backward rebuilds from the start
// (folding is fast, see BenchmarkReplaySeek). A component of the root:
// it takes its keys and, while playing, the ticks (Update), and draws the
// footer's line about where it is (View) at the width SetSize gave it.
type replay struct {
	c       *common
	keys    replayKeys
	trace   []observe.Event
	cursor  int
	playing bool
	width   int
}

// replayKeys move the replay's cursor.
type replayKeys struct {
	NextEvent, PrevEvent key.Binding
	NextRecon, PrevRecon key.Binding
	First, Last, Play    key.Binding
}

func newReplay(c *common, trace []observe.Event) *replay {
	say := c.say
	return &replay{c: c, trace: trace, keys: replayKeys{
		PrevEvent: bind([]string{"left", "h"}, "←", say.Text("prev event")),
		NextEvent: bind([]string{"right", "l"}, "→", say.Text("next event")),
		PrevRecon: bind([]string{"["}, "[", say.Text("prev reconcile")),
		NextRecon: bind([]string{"]"}, "]", say.Text("next reconcile")),
		First:     bind([]string{"home", "g"}, "g", say.Text("start")),
		Last:      bind([]string{"G", "end"}, "G", say.Text("end")),
		Play:      bind([]string{"p", " "}, "space", say.Text("play")),
	}}
}

func (r *replay) ShortHelp() []key.Binding {
	k := r.keys
	return []key.Binding{k.NextEvent, k.PrevEvent, k.NextRecon, k.PrevRecon, k.Play}
}

func (r *replay) FullHelp() [][]key.Binding {
	k := r.keys
	return [][]key.Binding{{k.NextEvent, k.PrevEvent, k.NextRecon, k.PrevRecon, k.First, k.Last, k.Play}}
}

// SetSize gives the footer line its width.
func (r *replay) SetSize(w, _ int) { r.width = w }

func (r *replay) atEnd() bool { return r.cursor >= len(r.trace) }

// now is the trace's clock: the time of the last applied event.
func (r *replay) now() time.Time {
	if r.cursor == 0 {
		if len(r.trace) > 0 {
			return r.trace[0].Time
		}
		return time.Time{}
	}
	return r.trace[r.cursor-1].Time
}

// current is the last applied event.
func (r *replay) current() (observe.Event, bool) {
	if r.cursor == 0 {
		return observe.Event{}, false
	}
	return r.trace[r.cursor-1], true
}

func (r *replay) forward(n int) {
	end := min(r.cursor+n, len(r.trace))
	r.c.state.Apply(r.trace[r.cursor:end]...)
	r.cursor = end
}

// seek rebuilds the state to hold the first target events; the state is
// refolded in place, since every component holds it.
func (r *replay) seek(target int) {
	target = min(max(target, 0), len(r.trace))
	if target < r.cursor {
		s := r.c.state
		*s = *state.New(s.Limits())
		r.cursor = 0
	}
	r.forward(target - r.cursor)
}

// nextReconcile moves to the end of the next reconcile: right after the
// next reconcile.end (and the queue calls that answer it, up to Done).
func (r *replay) nextReconcile() {
	for i := r.cursor; i < len(r.trace); i++ {
		if r.trace[i].Kind != observe.KindReconcileEnd {
			continue
		}
		end := i + 1
		key := r.trace[i].Key
		for j := i + 1; j < len(r.trace); j++ {
			if r.trace[j].Kind == observe.KindQueueDone && r.trace[j].Key == key {
				end = j + 1
				break
			}
			if r.trace[j].Kind == observe.KindReconcileStart && r.trace[j].Key == key {
				break
			}
		}
		r.forward(end - r.cursor)
		return
	}
	r.forward(len(r.trace) - r.cursor)
}

// previousReconcile moves back to the end of the reconcile before the one
// shown now.
func (r *replay) previousReconcile() {
	// The reconcile in view started at the last reconcile.start before the
	// cursor; go to just before that start, then forward to its predecessor's end.
	start := -1
	for i := r.cursor - 1; i >= 0; i-- {
		if r.trace[i].Kind == observe.KindReconcileStart {
			start = i
			break
		}
	}
	if start <= 0 {
		r.seek(0)
		return
	}
	prevStart := -1
	for i := start - 1; i >= 0; i-- {
		if r.trace[i].Kind == observe.KindReconcileStart {
			prevStart = i
			break
		}
	}
	if prevStart < 0 {
		r.seek(0)
		return
	}
	r.seek(prevStart)
	r.nextReconcile()
}

// Update moves the cursor by its keys, and one event per tick while
// playing; handled is false for any other message.
func (r *replay) Update(msg tea.Msg) (cmd tea.Cmd, handled bool) {
	if _, ok := msg.(tickMsg); ok {
		if !r.playing {
			return nil, true
		}
		r.forward(1)
		r.playing = !r.atEnd()
		return playTick(), true
	}
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		return nil, false
	}
	switch k := r.keys; {
	case key.Matches(km, k.NextEvent):
		r.forward(1)
	case key.Matches(km, k.PrevEvent):
		r.seek(r.cursor - 1)
	case key.Matches(km, k.NextRecon):
		r.nextReconcile()
	case key.Matches(km, k.PrevRecon):
		r.previousReconcile()
	case key.Matches(km, k.First):
		r.seek(0)
	case key.Matches(km, k.Last):
		r.seek(len(r.trace))
	case key.Matches(km, k.Play):
		r.playing = !r.playing && !r.atEnd()
		if r.playing {
			cmd = playTick()
		}
	default:
		return nil, false
	}
	return cmd, true
}

func playTick() tea.Cmd {
	return tea.Tick(replayEvery, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// badge is the header's mark: playing or paused, and where.
func (r *replay) badge() string {
	mark := "❚❚"
	if r.playing {
		mark = "▶"
	}
	return r.c.st.BadgeReplay.Render(r.c.say.Textf("%s REPLAY %d/%d", mark, r.cursor, len(r.trace)))
}

// elapsed is how far into the trace the cursor is.
func (r *replay) elapsed() (time.Duration, bool) {
	if len(r.trace) == 0 {
		return 0, false
	}
	return r.now().Sub(r.trace[0].Time), true
}

// View is the footer's line about the cursor: the event just applied, in
// the trace's words.
func (r *replay) View() string {
	st, say := r.c.st, r.c.say
	if len(r.trace) == 0 {
		return clip(st.Warn.Render(say.Text("the trace is empty")), r.width)
	}
	e, ok := r.current()
	if !ok {
		start := say.Count(len(r.trace), "start of trace (%d events) — → steps one event, ] one reconcile, space plays", "start of trace (%d events) — → steps one event, ] one reconcile, space plays")
		return clip(st.Faint.Render(start), r.width)
	}
	return clip(st.Faint.Render(say.Textf("event %d/%d  %s  ", r.cursor, len(r.trace), e.Time.Format("15:04:05.000")))+describeEvent(st, e), r.width)
}
