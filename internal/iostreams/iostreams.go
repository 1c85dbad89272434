// Package iostreams is the terminal a command talks to: its three standard
// streams and what they are. Whether stdin and stdout are terminals, whether
// to use colour, how wide the terminal is, its background and the pager are
// decided here, once, so that commands ask the streams instead of checking
// file descriptors and environment variables themselves (the shape of gh's
// pkg/iostreams). System returns the process's own streams; Test returns
// fake ones whose answers a test sets.
package iostreams

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/muesli/termenv"
	"golang.org/x/term"
)

// DefaultWidth is the terminal width assumed when it cannot be measured.
const DefaultWidth = 80

// Terminal themes, as TerminalTheme reports them.
const (
	ThemeDark  = "dark"
	ThemeLight = "light"
	// ThemeNone means no colour at all.
	ThemeNone = "none"
)

// IOStreams are a command's standard streams and what is known about them.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdinTTY, stdoutTTY bool
	// profile is what Out can show: termenv.Ascii is no colour.
	profile termenv.Profile
	// background is ThemeDark or ThemeLight.
	background string
	// width, when set, is the terminal width (tests); else it is measured.
	width int
	// columns is $COLUMNS, the width to lay text out at when Out is no
	// terminal that can be measured (0: unset or not a width).
	columns int
	// outFile is the terminal Out was when the streams were made; the
	// pager replaces Out, and the terminal is still measured through it.
	outFile *os.File

	pagerCommand string
	pagerEnv     []string
	pager        *pagerProcess
}

// System returns the process's own streams, with every answer decided from
// the file descriptors and the environment (NO_COLOR, CLICOLOR,
// CLICOLOR_FORCE, TERM, COLORTERM, CI, COLORFGBG, COLUMNS, PAGER, LESS) as
// they are now.
func System() *IOStreams {
	return fromEnv(os.Stdin, os.Stdout, os.Stderr, os.Getenv)
}

// fromEnv makes streams whose answers come from the streams themselves and
// from getenv.
func fromEnv(in io.Reader, out, errOut io.Writer, getenv func(string) string) *IOStreams {
	s := &IOStreams{In: in, Out: out, ErrOut: errOut,
		stdinTTY: isTerminal(in), stdoutTTY: isTerminal(out), background: backgroundOf(getenv)}
	if f, ok := out.(*os.File); ok && s.stdoutTTY {
		s.outFile = f
	}
	// termenv's own decision: no colour under NO_COLOR or CLICOLOR=0, on a
	// non-terminal (unless CLICOLOR_FORCE), in CI, or for a TERM without colours.
	s.profile = termenv.NewOutput(out, termenv.WithEnvironment(environ(getenv))).Profile
	if n, err := strconv.Atoi(strings.TrimSpace(getenv("COLUMNS"))); err == nil && n > 0 {
		s.columns = n
	}
	s.pagerCommand = getenv("PAGER")
	if s.pagerCommand == "" {
		s.pagerCommand = "less -R"
		if getenv("LESS") == "" {
			// As git does: quit if it fits on one screen, keep it on screen after quitting.
			s.pagerEnv = []string{"LESS=FRX"}
		}
	}
	return s
}

// Test returns streams over fresh buffers, and the buffers: not terminals,
// no colour, no pager, DefaultWidth columns, a dark background — whatever
// the test process's own environment. Setters change each answer.
func Test() (streams *IOStreams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut, profile: termenv.Ascii, background: ThemeDark}, in, out, errOut
}

// IsStdinTTY reports whether In is a terminal.
func (s *IOStreams) IsStdinTTY() bool { return s.stdinTTY }

// SetStdinTTY overrides IsStdinTTY.
func (s *IOStreams) SetStdinTTY(isTTY bool) { s.stdinTTY = isTTY }

// IsStdoutTTY reports whether Out is a terminal (still true while the
// pager, which shows the output on it, runs).
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// SetStdoutTTY overrides IsStdoutTTY.
func (s *IOStreams) SetStdoutTTY(isTTY bool) { s.stdoutTTY = isTTY }

// ColorEnabled reports whether output to Out may carry colours.
func (s *IOStreams) ColorEnabled() bool { return s.profile != termenv.Ascii }

// SetColorEnabled overrides ColorEnabled (with the 16 ANSI colours).
func (s *IOStreams) SetColorEnabled(enabled bool) {
	s.profile = termenv.Ascii
	if enabled {
		s.profile = termenv.ANSI
	}
}

// ColorProfile is how many colours Out shows: termenv.Ascii (none), ANSI,
// ANSI256 or TrueColor.
func (s *IOStreams) ColorProfile() termenv.Profile { return s.profile }

// TerminalTheme is ThemeNone without colour, else the terminal's background:
// ThemeLight when COLORFGBG says it is light, else ThemeDark. The terminal
// is never asked (termenv and glamour's "auto" do): some terminals and
// multiplexers never answer, and the question then costs seconds.
func (s *IOStreams) TerminalTheme() string {
	if !s.ColorEnabled() {
		return ThemeNone
	}
	return s.background
}

// SetTerminalTheme overrides the background TerminalTheme reports when
// colour is on (ThemeDark or ThemeLight).
func (s *IOStreams) SetTerminalTheme(theme string) { s.background = theme }

// backgroundOf reads COLORFGBG, "foreground;background" (sometimes with a
// middle field), set by rxvt, Konsole and others: backgrounds 7 and 15 are white.
func backgroundOf(getenv func(string) string) string {
	fields := strings.Split(getenv("COLORFGBG"), ";")
	if bg := fields[len(fields)-1]; bg == "7" || bg == "15" {
		return ThemeLight
	}
	return ThemeDark
}

// TerminalSize is the size of the terminal Out is, in columns and rows;
// ok is false when Out is no terminal or its size cannot be read.
func (s *IOStreams) TerminalSize() (width, height int, ok bool) {
	if s.width > 0 {
		return s.width, 0, true
	}
	if s.outFile == nil {
		return 0, 0, false
	}
	w, h, err := term.GetSize(int(s.outFile.Fd()))
	if err != nil {
		return 0, 0, false
	}
	return w, h, true
}

// TerminalWidth is the width to lay text out at: the terminal's, when Out
// is one (the pager shows text on it, so this stays its width while the
// pager runs); else $COLUMNS, when set to a number (`COLUMNS=150 lab read
// 3.1 | less`); else DefaultWidth.
func (s *IOStreams) TerminalWidth() int {
	if w, _, ok := s.TerminalSize(); ok && w > 0 {
		return w
	}
	if s.columns > 0 {
		return s.columns
	}
	return DefaultWidth
}

// SetTerminalWidth overrides TerminalWidth.
func (s *IOStreams) SetTerminalWidth(width int) { s.width = width }

// SetPager sets the pager's command line ("" for none) and drops the
// environment System chose for the default pager.
func (s *IOStreams) SetPager(command string) {
	s.pagerCommand, s.pagerEnv = command, nil
}

// SaveTerminal returns what puts the terminal back as it is now (cooked
// mode, main screen, cursor shown), for a process that may end without a
// full-screen view cleaning up after itself; it does nothing when In is
// not a terminal.
func (s *IOStreams) SaveTerminal() (restore func()) {
	in, ok := s.In.(*os.File)
	if !ok {
		return func() {}
	}
	fd := int(in.Fd())
	state, err := term.GetState(fd)
	if err != nil {
		return func() {}
	}
	return func() {
		_ = term.Restore(fd, state)
		if s.outFile != nil {
			out := termenv.NewOutput(s.outFile)
			out.ExitAltScreen()
			out.ShowCursor()
		}
	}
}

// isTerminal reports whether a stream is a terminal.
func isTerminal(stream any) bool {
	f, ok := stream.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// environ is a getenv function as the environment termenv reads.
type environ func(string) string

func (e environ) Getenv(key string) string { return e(key) }

// Environ is only used by termenv to start programs, which it is not asked to.
func (e environ) Environ() []string { return nil }

var _ termenv.Environ = environ(nil)
