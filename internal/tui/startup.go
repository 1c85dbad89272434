package tui

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/operator-lab/lab/internal/l10n"
)

// startup is the start-up screen: each step of bringing the lab up, with
// its time, so a learner sees what a control plane is made of. A component
// of the root: it takes the start-up messages (Update) and draws the whole
// screen (View) until the lab is ready.
type startup struct {
	st      Styles
	say     l10n.Printer
	spinner spinner.Model
	clock   func() time.Time
	title   string // the lab's, drawn above the steps
	width   int

	steps  []startupStep
	began  time.Time
	failed bool
}

type startupStep struct {
	name    string
	started time.Time
	took    time.Duration
	detail  string
	done    bool
	err     error
}

func newStartup(names []string, st Styles, say l10n.Printer, clock func() time.Time, title string) startup {
	now := clock()
	s := startup{st: st, say: say, clock: clock, title: title, began: now,
		spinner: spinner.New(spinner.WithSpinner(spinner.MiniDot), spinner.WithStyle(st.Spinner))}
	for _, n := range names {
		s.steps = append(s.steps, startupStep{name: n})
	}
	if len(s.steps) > 0 {
		s.steps[0].started = now
	}
	return s
}

// SetSize gives the screen its width; lines longer are clipped.
func (s *startup) SetSize(w, _ int) { s.width = w }

// Init starts the spinner of the running step.
func (s startup) Init() tea.Cmd { return s.spinner.Tick }

// Update takes a step's progress, or the spinner's tick.
func (s startup) Update(msg tea.Msg) (startup, tea.Cmd) {
	switch msg := msg.(type) {
	case spinner.TickMsg:
		var cmd tea.Cmd
		s.spinner, cmd = s.spinner.Update(msg)
		return s, cmd
	case StepStartedMsg:
		s.started(msg.Step, s.clock())
	case StepDoneMsg:
		s.done(msg, s.clock())
	case StartFailedMsg:
		s.fail(msg.Err, s.clock())
	case StepDetailMsg:
		s.steps[s.find(msg.Step)].detail = msg.Detail
	}
	return s, nil
}

func (s *startup) find(name string) int {
	for i, st := range s.steps {
		if st.name == name {
			return i
		}
	}
	s.steps = append(s.steps, startupStep{name: name})
	return len(s.steps) - 1
}

func (s *startup) started(name string, now time.Time) {
	s.steps[s.find(name)].started = now
}

// done marks a step finished; the next unfinished step starts its clock.
func (s *startup) done(msg StepDoneMsg, now time.Time) {
	i := s.find(msg.Step)
	st := &s.steps[i]
	st.done, st.took, st.detail, st.err = msg.Err == nil, msg.Took, msg.Detail, msg.Err
	if msg.Err != nil {
		s.failed = true
		return
	}
	for j := range s.steps {
		if !s.steps[j].done {
			if s.steps[j].started.IsZero() {
				s.steps[j].started = now
			}
			break
		}
	}
}

// fail marks the first unfinished step as failed.
func (s *startup) fail(err error, now time.Time) {
	for i := range s.steps {
		if !s.steps[i].done {
			s.done(StepDoneMsg{Step: s.steps[i].name, Took: now.Sub(s.steps[i].started), Err: err}, now)
			return
		}
	}
	s.done(StepDoneMsg{Step: "start", Err: err}, now)
}

// View draws the screen.
func (s startup) View() string {
	st, say := s.st, s.say
	now := s.clock()
	var b strings.Builder
	b.WriteString("\n  " + s.title + "\n\n")
	heading := say.Text("Starting your lab")
	if s.failed {
		heading = say.Text("The lab could not start")
	}
	b.WriteString("  " + st.Bold.Render(heading) + "\n\n")
	nameW := 0
	for _, step := range s.steps {
		nameW = max(nameW, utf8.RuneCountInString(say.Text(step.name))) // as %-*s pads
	}
	runningShown := false
	for _, step := range s.steps {
		var mark, timing string
		switch {
		case step.err != nil:
			mark, timing = st.Bad.Render("✗"), st.Bad.Render(say.Text("failed"))
		case step.done:
			mark, timing = st.OK.Render("✓"), formatDuration(step.took)
		case !runningShown && !s.failed:
			runningShown = true
			mark = s.spinner.View()
			if !step.started.IsZero() {
				timing = st.Faint.Render(formatDuration(now.Sub(step.started)) + "…")
			}
		default:
			mark = st.Faint.Render("·")
		}
		// A step is named by its constant (controlplane.StepEtcd…), which
		// the catalog translates; a name made with the catalog is its own.
		name := fmt.Sprintf("%-*s", nameW, say.Text(step.name))
		if !step.done && step.err == nil {
			name = st.Faint.Render(name)
		}
		line := fmt.Sprintf("  %s %s  %8s", mark, name, timing)
		if step.detail != "" {
			line += "  " + st.Faint.Render(step.detail)
		}
		b.WriteString(clip(line, s.width) + "\n")
		if step.err != nil {
			for _, l := range strings.Split(step.err.Error(), "\n") {
				b.WriteString(clip("      "+st.Bad.Render(l), s.width) + "\n")
			}
		}
	}
	b.WriteString("\n  " + st.Faint.Render(say.Textf("elapsed %s · q quits", formatDuration(now.Sub(s.began)))) + "\n")
	return b.String()
}
