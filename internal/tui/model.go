package tui

import (
	"fmt"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/operator-lab/lab/internal/tui/state"
	"github.com/operator-lab/lab/observe"
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
	st     Styles
	paints paintCodes
	keys   KeyMap
	help   help.Model
	clock  func() time.Time

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

	exercises     exercisesLayer
	exercisesOpen bool

	// The terminal's size and the layout chosen for it, both set in
	// setSize on a resize, never in View.
	width, height int
	kind          layoutKind
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
		clock:    opts.Now,
		header:   opts.Header,
		controls: opts.Controls,
		events:   opts.Events,
		dropped:  opts.Dropped,
		limits:   opts.Limits,
		state:    state.New(opts.Limits),
		screen:   screenDashboard,
	}
	if m.clock == nil {
		m.clock = time.Now
	}
	m.help.Styles = st.Help
	m.lesson = newLessonPane(opts.Header.Lab, opts.Lang, st, opts.Trace != nil)
	m.exercises = exercisesLayer{st: st, lang: m.lesson.lang, clock: m.clock}
	if opts.Trace != nil {
		m.replay = newReplay(opts.Trace)
	}
	if len(opts.Startup) > 0 {
		m.screen = screenStartup
		m.startup = newStartup(opts.Startup, st, m.clock, m.titleText())
	}
	m.setSize(80, 24)
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
		return tea.Batch(m.startup.Init(), tick())
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

// Update handles a message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.setSize(msg.Width, msg.Height)
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
		m.startup, cmd = m.startup.Update(msg)
		return m, cmd
	case StepStartedMsg, StepDoneMsg, StartFailedMsg, StepDetailMsg:
		m.startup, _ = m.startup.Update(msg)
		return m, nil
	case ReadyMsg:
		m.screen = screenDashboard
		listen := tea.Cmd(nil)
		if msg.Header.Lab != m.lesson.lab {
			m.lesson = newLessonPane(msg.Header.Lab, m.lesson.lang, m.st, m.replay != nil)
			m.setSize(m.width, m.height) // the new pane has no size yet
			listen = m.syncLesson()
		}
		m.header, m.controls, m.events, m.dropped = msg.Header, msg.Controls, msg.Events, msg.Dropped
		m.refreshControls()
		return m, tea.Batch(m.listen(), listen)
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
		exercises:     m.exercises.known(),
		exercisesOpen: m.exercisesOpen,
	}, func(name string) bool {
		_, ok := m.switchByName(name)
		return ok
	})
}

// syncLesson shows the open lesson pane at its size; it returns the
// render of what the pane is missing.
func (m *Model) syncLesson() tea.Cmd {
	if !m.lessonOpen {
		return nil
	}
	return m.lesson.refresh()
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
// is open: closing it and its demo here, since they act on the model; the
// pane takes the keys that read it. handled is false for every other key.
func (m Model) onLessonKey(msg tea.KeyMsg) (next tea.Model, cmd tea.Cmd, handled bool) {
	switch k := m.keys; {
	case key.Matches(msg, k.Lesson, k.CloseLayer):
		m.lessonOpen = false
		m.refreshControls()
	case key.Matches(msg, k.Demo):
		cmd = m.runDemo()
	default:
		section := m.lesson.section
		cmd, handled = m.lesson.Update(msg, k)
		if m.lesson.section != section {
			m.refreshControls() // the demo key follows the section
		}
		return m, cmd, handled
	}
	return m, cmd, true
}
