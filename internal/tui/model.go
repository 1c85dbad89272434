package tui

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/operator-lab/lab/internal/tui/state"
	"github.com/operator-lab/lab/operator/observe"
)

// Options configure a Model.
type Options struct {
	Header Header
	// Controls drive the running lab; nil for a replay.
	Controls Controls
	// Events is the live stream (from observe.Bus.Subscribe). It may be nil
	// at first and arrive later in a ReadyMsg, after the start-up screen.
	Events  <-chan observe.Event
	Dropped func() uint64
	// Trace, when non-nil, opens the model as a replay of these events.
	Trace []observe.Event
	// Startup lists the start-up steps to show before the dashboard; empty
	// opens the dashboard at once.
	Startup []string
	// Now is the clock (tests fix it); nil means time.Now.
	Now func() time.Time
	// Renderer fixes the colour profile (tests use termenv.Ascii); nil uses
	// lipgloss's default renderer, which honours NO_COLOR.
	Renderer *lipgloss.Renderer
	Limits   state.Limits
	// Lang is the language of the lesson pane ("en", "ru"); empty chooses
	// as content.Lang does (LAB_LANG, then the locale). The lesson is the
	// one of Header.Lab.
	Lang string
	// Exercises is the learner's workspace and its progress, later updated
	// by ExercisesMsg; nil when the lab runs without a workspace.
	Exercises *ExercisesMsg
}

type screen int

const (
	screenStartup screen = iota
	screenDashboard
)

// Model is the root bubbletea model.
type Model struct {
	st      Styles
	paints  paintCodes
	keys    KeyMap
	help    help.Model
	spinner spinner.Model
	clock   func() time.Time

	header   Header
	controls Controls
	switches []Switch
	events   <-chan observe.Event
	dropped  func() uint64
	closed   bool
	// controlPlaneLost: the control plane stopped answering.
	controlPlaneLost bool

	state  *state.State
	limits state.Limits
	replay *replay

	screen  screen
	startup startup

	lesson     *lessonPane
	lessonOpen bool
	outage     *outage // an outage demo to end

	exercises     *ExercisesMsg // nil: no workspace
	exercisesOpen bool

	width, height int
	tab           int // the active pane of the layout's tab group
	showHelp      bool
	selected      string // key of the selected object
	pinned        int    // number of the reconcile pinned in the sequence pane; 0 follows the latest
	paused        bool
	waiting       int
	status        status
	changed       string // switch that changed last, highlighted for a moment
	changedAt     time.Time
}

// status is the transient message line.
type status struct {
	text string
	bad  bool
	at   time.Time
}

const statusFor = 6 * time.Second

// New builds the model.
func New(opts Options) Model {
	st := NewStyles(opts.Renderer)
	m := Model{
		st:       st,
		paints:   newPaintCodes(st),
		keys:     DefaultKeyMap(),
		help:     help.New(),
		spinner:  spinner.New(spinner.WithSpinner(spinner.MiniDot), spinner.WithStyle(st.Spinner)),
		clock:    opts.Now,
		header:   opts.Header,
		controls: opts.Controls,
		events:   opts.Events,
		dropped:  opts.Dropped,
		limits:   opts.Limits,
		state:    state.New(opts.Limits),
		screen:   screenDashboard,
		width:    80,
		height:   24,
	}
	if m.clock == nil {
		m.clock = time.Now
	}
	m.help.Styles = st.Help
	m.lesson = newLessonPane(opts.Header.Lab, opts.Lang, st.Markdown)
	if len(opts.Startup) > 0 {
		m.screen = screenStartup
		m.startup = newStartup(opts.Startup, m.clock())
	}
	if opts.Trace != nil {
		m.replay = newReplay(opts.Trace)
	}
	if opts.Exercises != nil {
		m.setExercises(*opts.Exercises)
	}
	m.refreshControls()
	return m
}

// State exposes the projection (for tests and for lab start's summary).
func (m Model) State() *state.State { return m.state }

// Init starts listening for events and ticking.
func (m Model) Init() tea.Cmd {
	switch {
	case m.screen == screenStartup:
		return tea.Batch(m.spinner.Tick, tick())
	case m.replay != nil:
		return nil
	}
	return tea.Batch(m.listen(), tick())
}

func (m Model) now() time.Time {
	if m.replay != nil {
		return m.replay.now(m.state)
	}
	return m.clock()
}

func tick() tea.Cmd {
	return tea.Tick(tickEvery, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// listen waits for the next batch of events.
func (m Model) listen() tea.Cmd {
	if m.events == nil || m.closed {
		return nil
	}
	return waitForEvents(m.events)
}

func waitForEvents(ch <-chan observe.Event) tea.Cmd {
	return func() tea.Msg {
		e, ok := <-ch
		if !ok {
			return eventsClosedMsg{}
		}
		batch := make(EventsMsg, 0, 64)
		batch = append(batch, e)
		timer := time.NewTimer(batchWindow)
		defer timer.Stop()
		for len(batch) < batchMax {
			select {
			case e, ok := <-ch:
				if !ok {
					return batch // the next wait reports the close
				}
				batch = append(batch, e)
			case <-timer.C:
				return batch
			}
		}
		return batch
	}
}

// Update handles a message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.refreshControls()
		return m, m.syncLesson()
	case lessonRenderedMsg:
		m.lesson.store(msg)
		return m, m.syncLesson()
	case tea.KeyMsg:
		return m.onKey(msg)
	case EventsMsg:
		m.state.Apply(msg...)
		return m, m.listen()
	case ExercisesMsg:
		m.setExercises(msg)
		return m, nil
	case NoticeMsg:
		m.setStatus(msg.Text, msg.Bad)
		return m, nil
	case ControlPlaneMsg:
		m.controlPlaneLost = msg.Lost
		if msg.Lost {
			m.setStatus(msg.Why+" — was `lab env down` run? Quit with q and start again", true)
		} else {
			m.setStatus("the control plane answers again", false)
		}
		return m, nil
	case eventsClosedMsg:
		m.closed = true
		m.setStatus("the operator stopped: no more events", true)
		return m, nil
	case tickMsg:
		m.refreshControls()
		m.endOutage()
		if m.replay != nil && m.replay.playing {
			m.replay.forward(m.state, 1)
			if m.replay.atEnd() {
				m.replay.playing = false
			}
			return m, tea.Tick(replayEvery, func(t time.Time) tea.Msg { return tickMsg(t) })
		}
		if m.replay != nil {
			return m, nil
		}
		return m, tick()
	case spinner.TickMsg:
		if m.screen != screenStartup {
			return m, nil
		}
		var cmd tea.Cmd
		m.spinner, cmd = m.spinner.Update(msg)
		return m, cmd
	case StepStartedMsg:
		m.startup.started(msg.Step, m.clock())
		return m, nil
	case StepDoneMsg:
		m.startup.done(msg, m.clock())
		return m, nil
	case StartFailedMsg:
		m.startup.fail(msg.Err, m.clock())
		return m, nil
	case StepDetailMsg:
		m.startup.steps[m.startup.find(msg.Step)].detail = msg.Detail
		return m, nil
	case ReadyMsg:
		m.screen = screenDashboard
		if msg.Header.Lab != m.lesson.lab {
			m.lesson = newLessonPane(msg.Header.Lab, m.lesson.lang, m.st.Markdown)
		}
		m.header, m.controls, m.events, m.dropped = msg.Header, msg.Controls, msg.Events, msg.Dropped
		m.refreshControls()
		return m, m.listen()
	case actionDoneMsg:
		if msg.err != nil {
			m.setStatus(fmt.Sprintf("%s failed: %v", msg.what, msg.err), true)
			return m, nil
		}
		if msg.key != "" {
			m.selected = msg.key
		}
		m.setStatus(msg.what+" — watch the sequence pane", false)
		return m, nil
	}
	return m, nil
}

// refreshControls re-reads what the controls report, so the view itself
// never calls into the running lab.
func (m *Model) refreshControls() {
	if m.controls != nil {
		m.switches = m.controls.Switches()
		m.paused = m.controls.Paused()
		m.waiting = m.controls.Waiting()
	}
	section, _ := m.lesson.current()
	m.keys.configure(keyMode{
		replay:        m.replay != nil,
		tabs:          len(m.tabGroup()) > 0,
		lesson:        m.lesson.offered(),
		lessonOpen:    m.lessonOpen,
		demo:          section.Demo != nil && section.Demo.Lab == m.header.Lab,
		exercises:     m.exercises != nil,
		exercisesOpen: m.exercisesOpen,
	}, func(name string) bool {
		_, ok := m.switchByName(name)
		return ok
	})
}

// syncLesson fits the open lesson pane to the screen; it returns the
// render of what the pane is missing.
func (m *Model) syncLesson() tea.Cmd {
	if !m.lessonOpen {
		return nil
	}
	return m.lesson.sync(m.lessonTextArea())
}

func (m Model) switchByName(name string) (Switch, bool) {
	for _, s := range m.switches {
		if s.Name == name {
			return s, true
		}
	}
	return Switch{}, false
}

func (m *Model) setStatus(text string, bad bool) {
	m.status = status{text: text, bad: bad, at: m.clock()}
}

func (m Model) onKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k := m.keys
	if key.Matches(msg, k.Quit) {
		return m, tea.Quit
	}
	if m.showHelp {
		if key.Matches(msg, k.Help, k.CloseLayer) {
			m.showHelp = false
		}
		return m, nil
	}
	if m.screen == screenStartup {
		return m, nil
	}
	if m.lessonOpen {
		if next, cmd, handled := m.onLessonKey(msg); handled {
			return next, cmd
		}
	}
	switch {
	case key.Matches(msg, k.Help):
		m.showHelp = true
	case key.Matches(msg, k.Lesson):
		m.lessonOpen, m.exercisesOpen = true, false
		m.refreshControls()
		return m, m.syncLesson()
	case key.Matches(msg, k.Exercises):
		m.toggleExercises()
	case m.exercisesOpen && key.Matches(msg, k.CloseLayer):
		m.toggleExercises()
	case key.Matches(msg, k.NextPane):
		m.tab++
	case key.Matches(msg, k.PrevPane):
		m.tab--
	case key.Matches(msg, k.Up):
		m.moveSelection(-1)
	case key.Matches(msg, k.Down):
		m.moveSelection(1)
	case key.Matches(msg, k.PrevRecon):
		if m.replay != nil {
			m.replay.previousReconcile(m.state)
		} else {
			m.pinReconcile(-1)
		}
	case key.Matches(msg, k.NextRecon):
		if m.replay != nil {
			m.replay.nextReconcile(m.state)
		} else {
			m.pinReconcile(1)
		}
	case key.Matches(msg, k.Follow):
		m.pinned = 0
	case m.replay != nil:
		return m.onReplayKey(msg)
	default:
		return m.onLiveKey(msg)
	}
	return m, nil
}

// onLessonKey handles the keys that mean something else while the lesson
// is open; handled is false for every other key.
func (m Model) onLessonKey(msg tea.KeyMsg) (next tea.Model, cmd tea.Cmd, handled bool) {
	k, p := m.keys, m.lesson
	switch {
	case key.Matches(msg, k.Lesson, k.CloseLayer):
		m.lessonOpen = false
		m.refreshControls()
	case key.Matches(msg, k.PrevSection, k.NextSection):
		dir := 1
		if key.Matches(msg, k.PrevSection) {
			dir = -1
		}
		if p.move(dir) {
			m.refreshControls()
			cmd = m.syncLesson()
		}
	case key.Matches(msg, k.ScrollUp):
		p.view.ScrollUp(1)
	case key.Matches(msg, k.ScrollDown):
		p.view.ScrollDown(1)
	case key.Matches(msg, k.PageUp):
		p.view.PageUp()
	case key.Matches(msg, k.PageDown):
		p.view.PageDown()
	case key.Matches(msg, k.Demo):
		cmd = m.runDemo()
	default:
		return m, nil, false
	}
	return m, cmd, true
}

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

func (m Model) onLiveKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k := m.keys
	switch {
	case key.Matches(msg, k.Requeue):
		m.cycleSwitch(switchRequeue, 1, true)
	case key.Matches(msg, k.Breaker):
		m.cycleSwitch(switchBreaker, 1, true)
	case key.Matches(msg, k.RateLimit):
		m.cycleSwitch(switchRateLimit, 1, true)
	case key.Matches(msg, k.External):
		m.cycleSwitch(switchExternal, 1, true)
	case key.Matches(msg, k.Backoff):
		m.cycleSwitch(switchBackoff, 1, true)
	case key.Matches(msg, k.Faster):
		m.cycleSwitch(switchTimescale, 1, false)
	case key.Matches(msg, k.Slower):
		m.cycleSwitch(switchTimescale, -1, false)
	case key.Matches(msg, k.Pause):
		if m.controls == nil {
			break
		}
		if m.controls.Paused() {
			m.controls.Resume()
			m.setStatus("resumed: workers reconcile freely again", false)
		} else {
			m.controls.Pause()
			m.setStatus("paused: each reconcile now waits at the gate — press s to let one through", false)
		}
		m.refreshControls()
	case key.Matches(msg, k.Step):
		if m.controls == nil {
			break
		}
		if !m.controls.Paused() {
			m.setStatus("step works while paused: press p first", true)
			break
		}
		m.controls.Step()
		m.pinned = 0
		m.setStatus("stepped: one reconcile let through", false)
		m.refreshControls()
	case key.Matches(msg, k.Create):
		return m, m.action("created object", func(ctx context.Context, c Controls) (string, error) {
			return c.CreateObject(ctx)
		})
	case key.Matches(msg, k.Update):
		return m, m.objectAction("changed the spec of", func(ctx context.Context, c Controls, key string) error {
			return c.UpdateSpec(ctx, key)
		})
	case key.Matches(msg, k.Burst):
		return m, m.objectAction("sent 5 quick spec changes to", func(ctx context.Context, c Controls, key string) error {
			return c.Burst(ctx, key, 5)
		})
	case key.Matches(msg, k.Delete):
		return m, m.objectAction("deleted", func(ctx context.Context, c Controls, key string) error {
			return c.Delete(ctx, key)
		})
	}
	return m, nil
}

// cycleSwitch moves a switch to its next (or previous) option; wrap says
// whether to go round (modes) or stop at the ends (timescale).
func (m *Model) cycleSwitch(name string, dir int, wrap bool) {
	sw, ok := m.switchByName(name)
	if !ok || m.controls == nil || len(sw.Options) == 0 {
		m.setStatus(fmt.Sprintf("this lab has no %s switch", name), true)
		return
	}
	i := indexOf(sw.Options, sw.Value)
	next := i + dir
	switch {
	case wrap:
		next = (next + len(sw.Options)) % len(sw.Options)
	case next < 0 || next >= len(sw.Options):
		m.setStatus(fmt.Sprintf("%s is already at its %s", name, map[bool]string{true: "fastest", false: "slowest"}[dir > 0]), false)
		return
	}
	value := sw.Options[next]
	if err := m.controls.SetSwitch(name, value); err != nil {
		m.setStatus(fmt.Sprintf("%s=%s: %v", name, value, err), true)
		return
	}
	m.changed, m.changedAt = name, m.clock()
	m.setStatus(fmt.Sprintf("%s → %s: %s", name, value, explainSwitch(name, value)), false)
	m.refreshControls()
}

func indexOf(options []string, v string) int {
	for i, o := range options {
		if o == v {
			return i
		}
	}
	return -1
}

// explainSwitch says, in one line, what the new value does to the next reconciles.
func explainSwitch(name, value string) string {
	switch name + "=" + value {
	case "requeue=error":
		return "not-ready returns an error → AddRateLimited (5ms·2ⁿ per item)"
	case "requeue=requeue":
		return "returns Requeue: true (deprecated) → also AddRateLimited, not immediate"
	case "requeue=after":
		return "returns RequeueAfter → Forget + AddAfter(d): a fixed delay you choose"
	case "requeue=terminal":
		return "returns TerminalError → logged, not retried, no Forget"
	case "breaker=on":
		return "external calls go through the circuit breaker"
	case "breaker=off":
		return "external calls bypass the circuit breaker"
	case "ratelimit=on":
		return "external calls are rate limited (x/time/rate)"
	case "ratelimit=off":
		return "external calls are not rate limited"
	case "backoff=controller":
		return "retry delays come from the queue's rate limiter"
	case "backoff=lesson":
		return "retry delays come from the lesson's 5s·2ⁿ backoff via RequeueAfter"
	}
	switch name {
	case switchExternal:
		return "the simulated external system is now " + value
	case switchTimescale:
		if f, err := strconv.ParseFloat(value, 64); err == nil && f > 1 {
			return fmt.Sprintf("delays the operator chooses are %s× shorter", value)
		}
		return "delays run at real time"
	}
	return "applies from the next reconcile"
}

func (m *Model) action(what string, run func(context.Context, Controls) (string, error)) tea.Cmd {
	return m.notedAction(what, run, "")
}

// notedAction is action with a note said after the object's name.
func (m *Model) notedAction(what string, run func(context.Context, Controls) (string, error), note string) tea.Cmd {
	c := m.controls
	if c == nil {
		return nil
	}
	m.setStatus(what+"…", false)
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		key, err := run(ctx, c)
		if err == nil && key != "" {
			what += " " + m.displayKey(key)
		}
		return actionDoneMsg{what: what + note, key: key, err: err}
	}
}

func (m *Model) objectAction(what string, run func(context.Context, Controls, string) error) tea.Cmd {
	o, ok := m.selectedObject()
	if !ok || o.Deleted {
		m.setStatus("no object selected: press c to create one", true)
		return nil
	}
	objectKey := o.Key
	return m.action(what+" "+m.displayKey(objectKey), func(ctx context.Context, c Controls) (string, error) {
		return "", run(ctx, c, objectKey)
	})
}

// selectedObject is the object actions apply to: the one selected with
// ↑/↓, else the newest object not deleted.
func (m Model) selectedObject() (*state.Object, bool) {
	if o, ok := m.state.Object(m.selected); ok {
		return o, true
	}
	objects := m.state.Objects()
	for i := len(objects) - 1; i >= 0; i-- {
		if !objects[i].Deleted {
			return objects[i], true
		}
	}
	if len(objects) > 0 {
		return objects[len(objects)-1], true
	}
	return nil, false
}

func (m *Model) moveSelection(dir int) {
	objects := m.state.Objects()
	if len(objects) == 0 {
		return
	}
	cur, _ := m.selectedObject()
	i := 0
	for j, o := range objects {
		if o == cur {
			i = j
		}
	}
	i = min(max(i+dir, 0), len(objects)-1)
	m.selected = objects[i].Key
}

// pinReconcile moves the sequence pane to an older (-1) or newer (+1)
// reconcile; moving past the newest follows live again.
func (m *Model) pinReconcile(dir int) {
	n := m.state.ReconcileCount()
	if n == 0 {
		return
	}
	idx := n - 1
	if m.pinned != 0 {
		for i := 0; i < n; i++ {
			if m.state.ReconcileAt(i).N == m.pinned {
				idx = i
			}
		}
	} else if dir > 0 {
		return
	} else {
		idx = n // so one step back lands on the newest
	}
	idx += dir
	switch {
	case idx >= n:
		m.pinned = 0
	case idx < 0:
		m.pinned = m.state.ReconcileAt(0).N
	default:
		m.pinned = m.state.ReconcileAt(idx).N
	}
}
