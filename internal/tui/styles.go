package tui

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	glamourstyles "github.com/charmbracelet/glamour/styles"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/operator-lab/lab/internal/tui/state"
	"github.com/operator-lab/lab/observe"
)

// Styles holds every style the UI uses, built once from one renderer so the
// colour profile (and NO_COLOR, which the renderer honours) applies
// everywhere. Nothing else in the package creates styles.
//
// Emphasis never depends on colour alone: the current phase is bracketed,
// bars differ in glyph, states carry symbols, so the screen reads the same
// with NO_COLOR.
type Styles struct {
	// Layout carries no colour: panes use it for width and padding.
	Layout lipgloss.Style

	Plain, Bold, Faint, Italic Ink

	Title    Ink // the lab name in the header
	Label    Ink // a switch name
	Value    Ink // a switch value, a count
	Changed  Ink // a value that just changed
	Selected Ink // the selected object line

	OK, Warn, Bad, Info Ink

	Border, BorderFocus     Ink
	PaneTitle, PaneTitleDim Ink
	PaneHint                Ink

	BadgeLive, BadgePaused, BadgeReplay Ink

	// Lanes of the sequence pane: Watch, Queue, Reconcile, Client, API.
	Lanes    [laneCount]Ink
	Lifeline Ink

	PhaseCurrent, PhaseVisited, PhaseAhead Ink

	RateLimiter, RequeueAfter, Lesson Ink

	Spinner lipgloss.Style
	Overlay lipgloss.Style
	Help    help.Styles

	// Markdown is the glamour style the lesson pane renders with: plain
	// text without colour (NO_COLOR, tests), else matched to the background.
	Markdown string
}

// Ink is an inline text style reduced to the escape sequences around the
// text: rendering is a concatenation, so a frame full of short coloured runs
// stays cheap.
type Ink struct{ codes ansiCodes }

func ink(style lipgloss.Style) Ink { return Ink{codes: codesOf(style)} }

// Render styles one line of text.
func (i Ink) Render(s string) string { return i.codes.wrap(s) }

// NewStyles builds the styles for a renderer (nil: lipgloss's default renderer).
func NewStyles(r *lipgloss.Renderer) Styles {
	if r == nil {
		r = lipgloss.DefaultRenderer()
	}
	// Colours are resolved for the terminal once, here: left as hex (or
	// adaptive) colours, lipgloss would convert them to the terminal's
	// palette on every Render, which made a frame cost ~20 ms.
	profile, dark := r.ColorProfile(), r.HasDarkBackground()
	color := func(light, dark_ string) lipgloss.TerminalColor {
		hex := light
		if dark {
			hex = dark_
		}
		switch c := profile.Color(hex).(type) {
		case termenv.ANSIColor:
			return lipgloss.Color(strconv.Itoa(int(c)))
		case termenv.ANSI256Color:
			return lipgloss.Color(strconv.Itoa(int(c)))
		case termenv.RGBColor:
			return lipgloss.Color(string(c))
		}
		return lipgloss.NoColor{}
	}
	var (
		fg      = color("#1F2328", "#E6EDF3")
		dim     = color("#6E7781", "#8B949E")
		line    = color("#AFB8C1", "#3D444D")
		accent  = color("#8250DF", "#BC8CFF")
		green   = color("#1A7F37", "#3FB950")
		yellow  = color("#9A6700", "#D29922")
		red     = color("#CF222E", "#F85149")
		blue    = color("#0969DA", "#58A6FF")
		cyan    = color("#1B7C83", "#39C5CF")
		magenta = color("#BF3989", "#DB61A2")
		orange  = color("#BC4C00", "#F0883E")
	)
	s := r.NewStyle
	st := Styles{
		Layout: s(),
		Plain:  ink(s()),
		Bold:   ink(s().Bold(true)),
		Faint:  ink(s().Foreground(dim)),
		Italic: ink(s().Italic(true).Foreground(dim)),

		Title:    ink(s().Bold(true).Foreground(accent)),
		Label:    ink(s().Foreground(dim)),
		Value:    ink(s().Bold(true).Foreground(fg)),
		Changed:  ink(s().Bold(true).Foreground(orange)),
		Selected: ink(s().Bold(true).Foreground(fg)),

		OK:   ink(s().Foreground(green)),
		Warn: ink(s().Foreground(yellow)),
		Bad:  ink(s().Foreground(red).Bold(true)),
		Info: ink(s().Foreground(blue)),

		Border:       ink(s().Foreground(line)),
		BorderFocus:  ink(s().Foreground(accent)),
		PaneTitle:    ink(s().Bold(true).Foreground(accent)),
		PaneTitleDim: ink(s().Bold(true).Foreground(dim)),
		PaneHint:     ink(s().Foreground(dim)),

		BadgeLive:   ink(s().Bold(true).Foreground(green)),
		BadgePaused: ink(s().Bold(true).Foreground(yellow).Reverse(true)),
		BadgeReplay: ink(s().Bold(true).Foreground(blue)),

		Lanes: [laneCount]Ink{
			ink(s().Foreground(magenta)), // Watch
			ink(s().Foreground(yellow)),  // Queue
			ink(s().Foreground(blue)),    // Reconcile
			ink(s().Foreground(cyan)),    // Client
			ink(s().Foreground(green)),   // API
		},
		Lifeline: ink(s().Foreground(line)),

		PhaseCurrent: ink(s().Bold(true).Reverse(true).Foreground(green)),
		PhaseVisited: ink(s().Foreground(fg)),
		PhaseAhead:   ink(s().Foreground(dim)),

		RateLimiter:  ink(s().Foreground(red)),
		RequeueAfter: ink(s().Foreground(blue)),
		Lesson:       ink(s().Foreground(magenta)),

		Spinner: s().Foreground(yellow),
		Overlay: s().Border(lipgloss.RoundedBorder()).BorderForeground(accent).Padding(0, 1),
	}
	switch {
	case profile == termenv.Ascii:
		st.Markdown = glamourstyles.NoTTYStyle
	case dark:
		st.Markdown = glamourstyles.DarkStyle
	default:
		st.Markdown = glamourstyles.LightStyle
	}
	st.Help = help.Styles{
		Ellipsis:       s().Foreground(dim),
		ShortKey:       s().Bold(true).Foreground(fg),
		ShortDesc:      s().Foreground(dim),
		ShortSeparator: s().Foreground(line),
		FullKey:        s().Bold(true).Foreground(accent),
		FullDesc:       s().Foreground(fg),
		FullSeparator:  s().Foreground(line),
	}
	return st
}

// Result styles a reconcile result.
func (st Styles) Result(result string) Ink {
	switch result {
	case observe.ResultSuccess:
		return st.OK
	case observe.ResultRequeueAfter:
		return st.Info
	case observe.ResultRequeue:
		return st.Warn
	case observe.ResultError, observe.ResultTerminal:
		return st.Bad
	}
	return st.Faint
}

// Outcome styles a client or external call outcome.
func (st Styles) Outcome(outcome string) Ink {
	switch outcome {
	case "", observe.OutcomeOK:
		return st.OK
	case observe.OutcomeNotFound, observe.OutcomeConflict, observe.OutcomeAlreadyExists:
		return st.Warn
	}
	return st.Bad
}

// Chooser styles a retry delay by who chose it.
func (st Styles) Chooser(c state.Chooser) Ink {
	switch c {
	case state.ChosenByRateLimiter:
		return st.RateLimiter
	case state.ChosenByLesson:
		return st.Lesson
	}
	return st.RequeueAfter
}

// ansiCodes splits what a style wraps around text into the prefix and
// suffix, so hot loops can colour many short runs without calling Render
// for each one.
type ansiCodes struct{ prefix, suffix string }

func codesOf(style lipgloss.Style) ansiCodes {
	const marker = "\x00"
	out := style.Inline(true).Render(marker)
	i := strings.Index(out, marker)
	if i < 0 {
		return ansiCodes{}
	}
	return ansiCodes{prefix: out[:i], suffix: out[i+len(marker):]}
}

func (c ansiCodes) wrap(s string) string {
	if c.prefix == "" && c.suffix == "" {
		return s
	}
	return c.prefix + s + c.suffix
}
