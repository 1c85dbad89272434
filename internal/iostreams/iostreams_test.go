package iostreams

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/muesli/termenv"
)

// env is a fake environment.
func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestTestStreamsAreNoTerminalWhateverTheEnvironment(t *testing.T) {
	t.Setenv("CLICOLOR_FORCE", "1")
	t.Setenv("PAGER", "cat")
	ios, in, out, errOut := Test()
	if ios.IsStdinTTY() || ios.IsStdoutTTY() || ios.ColorEnabled() || ios.TerminalTheme() != ThemeNone {
		t.Errorf("Test(): stdin TTY %v, stdout TTY %v, colour %v, theme %q", ios.IsStdinTTY(), ios.IsStdoutTTY(), ios.ColorEnabled(), ios.TerminalTheme())
	}
	if ios.TerminalWidth() != DefaultWidth {
		t.Errorf("Test() width = %d, want %d", ios.TerminalWidth(), DefaultWidth)
	}
	in.WriteString("typed")
	b, _ := io.ReadAll(ios.In)
	_, _ = io.WriteString(ios.Out, "out")
	_, _ = io.WriteString(ios.ErrOut, "err")
	if string(b) != "typed" || out.String() != "out" || errOut.String() != "err" {
		t.Errorf("the streams are not the buffers: in %q, out %q, err %q", b, out, errOut)
	}
	ios.SetStdoutTTY(true)
	ios.SetColorEnabled(true)
	ios.SetTerminalWidth(132)
	ios.SetTerminalTheme(ThemeLight)
	if !ios.IsStdoutTTY() || !ios.ColorEnabled() || ios.TerminalWidth() != 132 || ios.TerminalTheme() != ThemeLight {
		t.Errorf("the setters did not take: TTY %v, colour %v, width %d, theme %q", ios.IsStdoutTTY(), ios.ColorEnabled(), ios.TerminalWidth(), ios.TerminalTheme())
	}
}

// TestWidthOfAPipeIsCOLUMNS: with no terminal to measure, text is laid
// out at $COLUMNS, and at DefaultWidth when it is unset or not a width.
func TestWidthOfAPipeIsCOLUMNS(t *testing.T) {
	for _, tc := range []struct {
		columns string
		want    int
	}{{"", DefaultWidth}, {"150", 150}, {" 40 ", 40}, {"0", DefaultWidth}, {"-3", DefaultWidth}, {"wide", DefaultWidth}} {
		var out bytes.Buffer
		s := fromEnv(strings.NewReader(""), &out, &out, env("COLUMNS", tc.columns))
		if got := s.TerminalWidth(); got != tc.want {
			t.Errorf("COLUMNS=%q: width %d, want %d", tc.columns, got, tc.want)
		}
	}
	var out bytes.Buffer
	s := fromEnv(strings.NewReader(""), &out, &out, env("COLUMNS", "150"))
	s.SetTerminalWidth(90)
	if got := s.TerminalWidth(); got != 90 {
		t.Errorf("a terminal's own width is %d, want 90 over COLUMNS", got)
	}
}

// TestColourFollowsTheEnvironment: termenv's rules — a pipe has no colour
// unless CLICOLOR_FORCE asks for it, and NO_COLOR wins over everything.
func TestColourFollowsTheEnvironment(t *testing.T) {
	for _, tc := range []struct {
		env  func(string) string
		want bool
	}{
		{env(), false},
		{env("TERM", "xterm-256color"), false}, // a pipe, not a terminal
		{env("CLICOLOR_FORCE", "1"), true},
		{env("CLICOLOR_FORCE", "1", "NO_COLOR", "1"), false},
		{env("CLICOLOR_FORCE", "0"), false},
	} {
		var out bytes.Buffer
		s := fromEnv(strings.NewReader(""), &out, &out, tc.env)
		if s.ColorEnabled() != tc.want {
			t.Errorf("CLICOLOR_FORCE=%q NO_COLOR=%q: colour %v, want %v", tc.env("CLICOLOR_FORCE"), tc.env("NO_COLOR"), s.ColorEnabled(), tc.want)
		}
		if s.IsStdoutTTY() || s.IsStdinTTY() {
			t.Error("a buffer is taken for a terminal")
		}
	}
}

func TestTerminalThemeReadsCOLORFGBG(t *testing.T) {
	for _, tc := range []struct{ colorfgbg, want string }{
		{"", ThemeDark},
		{"0;15", ThemeLight},
		{"0;7", ThemeLight},
		{"15;default;0", ThemeDark},
		{"0;default;15", ThemeLight},
	} {
		var out bytes.Buffer
		s := fromEnv(strings.NewReader(""), &out, &out, env("COLORFGBG", tc.colorfgbg, "CLICOLOR_FORCE", "1"))
		if got := s.TerminalTheme(); got != tc.want {
			t.Errorf("COLORFGBG=%q: theme %q, want %q", tc.colorfgbg, got, tc.want)
		}
		s.SetColorEnabled(false)
		if got := s.TerminalTheme(); got != ThemeNone {
			t.Errorf("COLORFGBG=%q without colour: theme %q, want %q", tc.colorfgbg, got, ThemeNone)
		}
	}
}

func TestSetColorEnabledChoosesTheANSIProfile(t *testing.T) {
	ios, _, _, _ := Test()
	ios.SetColorEnabled(true)
	if ios.ColorProfile() != termenv.ANSI {
		t.Errorf("profile %v, want ANSI", ios.ColorProfile())
	}
	ios.SetColorEnabled(false)
	if ios.ColorProfile() != termenv.Ascii {
		t.Errorf("profile %v, want Ascii", ios.ColorProfile())
	}
}

// TestTheDefaultPagerIsLessFRX: without PAGER, less -R, told (as git does)
// to quit on a short text and keep it on screen — unless LESS says otherwise.
func TestTheDefaultPagerIsLessFRX(t *testing.T) {
	for _, tc := range []struct {
		env         func(string) string
		command     string
		environment []string
	}{
		{env(), "less -R", []string{"LESS=FRX"}},
		{env("LESS", "-S"), "less -R", nil},
		{env("PAGER", "most -s"), "most -s", nil},
	} {
		var out bytes.Buffer
		s := fromEnv(strings.NewReader(""), &out, &out, tc.env)
		if s.pagerCommand != tc.command || !slices.Equal(s.pagerEnv, tc.environment) {
			t.Errorf("PAGER=%q LESS=%q: pager %q with %v, want %q with %v",
				tc.env("PAGER"), tc.env("LESS"), s.pagerCommand, s.pagerEnv, tc.command, tc.environment)
		}
	}
}

func TestPagerPassesTheTextThrough(t *testing.T) {
	ios, _, out, _ := Test()
	ios.SetStdoutTTY(true)
	ios.SetPager("cat")
	if err := ios.StartPager(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ios.Out == out {
		t.Fatal("StartPager did not send Out to the pager")
	}
	if _, err := io.WriteString(ios.Out, "through the pager\n"); err != nil {
		t.Fatal(err)
	}
	if err := ios.StopPager(); err != nil {
		t.Fatal(err)
	}
	if ios.Out != out || out.String() != "through the pager\n" {
		t.Errorf("after StopPager: Out restored %v, output %q", ios.Out == out, out)
	}
	if err := ios.StopPager(); err != nil {
		t.Errorf("a second StopPager: %v", err)
	}
}

func TestNoPagerWithoutATerminalOrAPagerThatStarts(t *testing.T) {
	ios, _, out, _ := Test()
	ios.SetPager("cat")
	if err := ios.StartPager(context.Background()); err != nil || ios.Out != out {
		t.Errorf("not a terminal: StartPager = %v, Out replaced %v", err, ios.Out != out)
	}
	ios.SetStdoutTTY(true)
	ios.SetPager("/nonexistent/pager -x")
	err := ios.StartPager(context.Background())
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/pager") || ios.Out != out {
		t.Errorf("a pager that cannot start: StartPager = %v, Out replaced %v", err, ios.Out != out)
	}
	if err := ios.StopPager(); err != nil {
		t.Errorf("StopPager without a pager: %v", err)
	}
}

// TestQuittingThePagerEarlyIsNoWriteError: the reader quits (here: a pager
// that reads nothing) while more than a pipe's buffer is still to come.
func TestQuittingThePagerEarlyIsNoWriteError(t *testing.T) {
	ios, _, _, _ := Test()
	ios.SetStdoutTTY(true)
	ios.SetPager("true")
	if err := ios.StartPager(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := ios.Out.Write(bytes.Repeat([]byte("x"), 1<<20)); err != nil {
		t.Errorf("writing after the pager quit: %v", err)
	}
	if err := ios.StopPager(); err != nil {
		t.Errorf("StopPager: %v", err)
	}
}

func TestAPagerCancelledWithItsContextIsNoError(t *testing.T) {
	ios, _, _, _ := Test()
	ios.SetStdoutTTY(true)
	ios.SetPager("sleep 60")
	ctx, cancel := context.WithCancel(context.Background())
	if err := ios.StartPager(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := ios.StopPager(); err != nil {
		t.Errorf("StopPager after ctx ended: %v", err)
	}
}
