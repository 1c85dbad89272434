package tui

import (
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/operator-lab/lab/content"
	"github.com/operator-lab/lab/internal/l10n"
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
	// Lang is the language of the interface and the lesson ("en", "ru");
	// empty chooses as content.Lang does (LAB_LANG, then the locale). The
	// lesson is the one of Header.Lab.
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

// Model is the root bubbletea model. It routes messages to its
// components and draws the header and the footer; the components (the
// start-up screen, the dashboard and its panes, the lesson, the exercises,
// the help, the replay and the live controls) hold pointers to one common
// and change only in the root's Update.
type Model struct {
	c      *common
	keys   rootKeys
	footer help.Model

	header  Header
	events  <-chan observe.Event
	dropped func() uint64
	closed  bool
	// controlPlaneLost: the control plane stopped answering.
	controlPlaneLost bool

	screen  screen
	startup startup
	layer   layer // what is open over the dashboard

	dash      *dashboard
	lesson    *lessonPane
	exercises *exercisesLayer
	help      *helpLayer
	detail    *detailLayer
	live      *live
	replay    *replay // nil when live

	width, height int // the terminal's, set on a resize
}

// New builds the model.
func New(opts Options) Model {
	st := NewStyles(opts.Renderer)
	c := newCommon(st, opts.Limits, opts.Now, opts.Trace != nil)
	c.namespace, c.lab = opts.Header.Namespace, opts.Header.Lab
	if lang, err := content.Lang(opts.Lang); err == nil { // the lesson pane shows the error
		c.say = l10n.For(lang)
	}
	m := Model{
		c:       c,
		keys:    newRootKeys(c.say),
		footer:  help.New(),
		header:  opts.Header,
		events:  opts.Events,
		dropped: opts.Dropped,
		screen:  screenDashboard,
	}
	m.footer.Styles = st.Help
	m.footer.ShortSeparator = "  "
	m.dash = newDashboard(c)
	m.help = newHelpLayer(c, m.dash.panes)
	m.live = newLive(c, &m.dash.focus, opts.Controls)
	m.lesson = newLessonPane(opts.Header.Lab, opts.Lang, st, opts.Trace != nil)
	m.lesson.demos = m.live
	m.exercises = newExercisesLayer(st, c.say, c.clock)
	m.detail = newDetailLayer(c, &m.dash.focus)
	if opts.Trace != nil {
		m.replay = newReplay(c, opts.Trace)
		c.now = m.replay.now
	}
	if len(opts.Startup) > 0 {
		m.screen = screenStartup
		m.startup = newStartup(opts.Startup, st, c.say, c.clock, m.labTitle(true))
	}
	m.setSize(80, 24)
	if opts.Exercises != nil {
		m.setExercises(*opts.Exercises)
	}
	m.configure()
	return m
}

// State exposes the projection (for tests and for lab start's summary).
func (m Model) State() *state.State { return m.c.state }

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

func tick() tea.Cmd {
	return tea.Tick(tickEvery, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// Update handles a message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.setSize(msg.Width, msg.Height)
		m.configure() // which panes share a slot follows the layout
		return m, m.syncLesson()
	case lessonRenderedMsg:
		m.lesson.store(msg)
		return m, m.syncLesson()
	case tea.KeyMsg:
		return m.onKey(msg)
	case EventsMsg:
		m.c.state.Apply(msg...)
		m.refreshDetail()
		return m, m.listen()
	case ExercisesMsg:
		m.setExercises(msg)
		return m, nil
	case NoticeMsg:
		m.c.setStatus(msg.Text, msg.Bad)
		return m, nil
	case ControlPlaneMsg:
		m.controlPlaneLost = msg.Lost
		if msg.Lost {
			m.c.setStatus(m.c.say.Textf("%s — was `lab env down` run? Quit with q and start again", msg.Why), true)
		} else {
			m.c.setStatus(m.c.say.Text("the control plane answers again"), false)
		}
		return m, nil
	case eventsClosedMsg:
		m.closed = true
		m.c.setStatus(m.c.say.Text("the operator stopped: no more events"), true)
		return m, nil
	case tickMsg:
		if m.replay != nil {
			cmd, _ := m.replay.Update(msg)
			m.refreshDetail() // the replay may have moved on
			return m, cmd
		}
		m.live.tickDemo()
		m.refreshDetail() // a running reconcile's time
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
		return m.ready(msg)
	case demoActedMsg:
		m.live.demoActed(msg)
		return m, nil
	case actionDoneMsg:
		if msg.err != nil {
			m.c.setStatus(m.c.say.Textf("%s failed: %v", msg.what, msg.err), true)
			return m, nil
		}
		if msg.key != "" {
			m.dash.focus.selected = msg.key
		}
		m.c.setStatus(m.c.say.Textf("%s — watch the sequence pane", msg.what), false)
		return m, nil
	}
	return m, nil
}

// ready ends the start-up screen: the lab runs, its events flow and its
// controls answer.
func (m Model) ready(msg ReadyMsg) (tea.Model, tea.Cmd) {
	m.screen = screenDashboard
	render := tea.Cmd(nil)
	if msg.Header.Lab != m.lesson.lab {
		m.lesson = newLessonPane(msg.Header.Lab, m.lesson.lang, m.c.st, m.replay != nil)
		m.lesson.demos = m.live
		m.setSize(m.width, m.height) // the new pane has no size yet
		render = m.syncLesson()
	}
	m.header, m.events, m.dropped = msg.Header, msg.Events, msg.Dropped
	m.c.namespace, m.c.lab = msg.Header.Namespace, msg.Header.Lab
	m.live.setControls(msg.Controls)
	m.configure()
	return m, tea.Batch(m.listen(), render)
}

// setSize takes a new terminal size: each component gets its size once,
// here, so that View only draws. The layers (lesson, exercises) share the
// frame below what stays of the dashboard; they are sized for it even
// while closed, which costs nothing: the lesson renders only when open.
func (m *Model) setSize(w, h int) {
	m.width, m.height = w, h
	m.startup.SetSize(w, h)
	m.dash.SetSize(w, m.bodyHeight())
	m.help.SetSize(w, m.bodyHeight())
	m.detail.SetSize(w, m.bodyHeight())
	lw, lh := m.dash.layerSize()
	m.lesson.SetSize(lw, lh)
	m.exercises.SetSize(lw, lh)
	if m.replay != nil {
		m.replay.SetSize(w-1, 1)
	}
}

// chromeRows are the header's two lines and the footer's two.
const chromeRows = 4

// bodyHeight is the rows between the header and the footer.
func (m Model) bodyHeight() int { return m.height - chromeRows }

// layout is the arrangement the dashboard chose for the terminal.
func (m Model) layout() layoutKind { return m.dash.kind }
