package tui

import (
	"strings"
	"time"

	"github.com/operator-lab/lab/internal/l10n"
	"github.com/operator-lab/lab/internal/tui/state"
)

// common is what the root and every component read, like soft-serve's
// common.Common: the styles, the folded events, the clocks, the session's
// namespace and the status line. The root creates it once and changes it
// only in Update; components hold the pointer, so a new session or a
// status said by any of them reaches all.
type common struct {
	st Styles
	// say renders interface text in the learner's language (the lesson's).
	say    l10n.Printer
	paints paintCodes
	// state is the one source of what the operator did, its gate and its
	// switches included, in live, replay and --mine mode alike.
	state *state.State
	// clock is the wall clock (status and highlight timing); now is the
	// clock of what is shown: the trace's in a replay.
	clock  func() time.Time
	now    func() time.Time
	replay bool

	namespace string // keys in it are shown by name alone
	lab       string // the running (or replayed) lab: "3.1", "4.4"
	// board is the switches the controls offer, in their order: which
	// switches the lab has and their values before any switch event.
	board []Switch

	status    status
	changed   string // the switch that changed last, highlighted for a moment
	changedAt time.Time
}

// newCommon starts the common state of a view drawn with st on the given
// clock; the root sets now to the trace's clock in a replay.
func newCommon(st Styles, limits state.Limits, clock func() time.Time, replay bool) *common {
	if clock == nil {
		clock = time.Now
	}
	return &common{st: st, paints: newPaintCodes(st), state: state.New(limits), clock: clock, now: clock, replay: replay}
}

// status is the transient message line.
type status struct {
	text string
	bad  bool
	at   time.Time
}

const statusFor = 6 * time.Second

func (c *common) setStatus(text string, bad bool) {
	c.status = status{text: text, bad: bad, at: c.clock()}
}

// noteChanged highlights a switch the learner (or a demo) just changed.
func (c *common) noteChanged(name string) { c.changed, c.changedAt = name, c.clock() }

// displayKey shortens keys in the session namespace to the object's name.
func (c *common) displayKey(key string) string { return displayKey(c.namespace, key) }

func displayKey(namespace, key string) string {
	if namespace != "" && strings.HasPrefix(key, namespace+"/") {
		return key[len(namespace)+1:]
	}
	return key
}

// gate is the step-through gate as its events tell it: whether it is
// paused, and how many reconciles it holds.
func (c *common) gate() (paused bool, waiting int) {
	g := c.state.Gate()
	return g.Paused, g.Waiting
}

// shownSwitch is a switch as the view shows it.
type shownSwitch struct{ name, value string }

// switches are the lab's switches at the values the switch events last
// reported, in the board's order; a switch no event has reported yet
// shows the value it had when the lab came up. Without a board (a
// replay) they are the switches the trace reported, as first seen.
func (c *common) switches() []shownSwitch {
	names, values := c.state.Switches()
	if len(c.board) == 0 {
		out := make([]shownSwitch, 0, len(names))
		for _, n := range names {
			out = append(out, shownSwitch{n, values[n]})
		}
		return out
	}
	out := make([]shownSwitch, 0, len(c.board))
	for _, s := range c.board {
		v, reported := values[s.Name]
		if !reported {
			v = s.Value
		}
		out = append(out, shownSwitch{s.Name, v})
	}
	return out
}

// switchValue is one switch's shown value, "" when the lab has none.
func (c *common) switchValue(name string) string {
	for _, s := range c.switches() {
		if s.name == name {
			return s.value
		}
	}
	return ""
}

// hasSwitch reports whether the running lab has the switch, so its key applies.
func (c *common) hasSwitch(name string) bool {
	for _, s := range c.board {
		if s.Name == name {
			return true
		}
	}
	return false
}
