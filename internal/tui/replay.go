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
// (folding is fast, see BenchmarkReplaySeek).
type replay struct {
	trace   []observe.Event
	cursor  int
	playing bool
}

func newReplay(trace []observe.Event) *replay {
	return &replay{trace: trace}
}

func (r *replay) atEnd() bool { return r.cursor >= len(r.trace) }

// now is the trace's clock: the time of the last applied event.
func (r *replay) now(s *state.State) time.Time {
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

func (r *replay) forward(s *state.State, n int) {
	end := min(r.cursor+n, len(r.trace))
	s.Apply(r.trace[r.cursor:end]...)
	r.cursor = end
}

// seek rebuilds s to hold the first target events.
func (r *replay) seek(s *state.State, target int) {
	target = min(max(target, 0), len(r.trace))
	if target < r.cursor {
		*s = *state.New(s.Limits())
		r.cursor = 0
	}
	r.forward(s, target-r.cursor)
}

// nextReconcile moves to the end of the next reconcile: right after the
// next reconcile.end (and the queue calls that answer it, up to Done).
func (r *replay) nextReconcile(s *state.State) {
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
		r.forward(s, end-r.cursor)
		return
	}
	r.forward(s, len(r.trace)-r.cursor)
}

// previousReconcile moves back to the end of the reconcile before the one
// shown now.
func (r *replay) previousReconcile(s *state.State) {
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
		r.seek(s, 0)
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
		r.seek(s, 0)
		return
	}
	r.seek(s, prevStart)
	r.nextReconcile(s)
}

// onReplayKey moves the replay cursor: the keys of the replay, kept with it.
func (m Model) onReplayKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k, r := m.keys, m.replay
	switch {
	case key.Matches(msg, k.NextEvent):
		r.forward(m.state, 1)
	case key.Matches(msg, k.PrevEvent):
		r.seek(m.state, r.cursor-1)
	case key.Matches(msg, k.First):
		r.seek(m.state, 0)
	case key.Matches(msg, k.Last):
		r.seek(m.state, len(r.trace))
	case key.Matches(msg, k.Play):
		r.playing = !r.playing && !r.atEnd()
		if r.playing {
			return m, tea.Tick(replayEvery, func(t time.Time) tea.Msg { return tickMsg(t) })
		}
	}
	return m, nil
}
