package cmd

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/operator-lab/lab/content"
	"github.com/operator-lab/lab/internal/iostreams"
)

// fakeTerminal is what a test's stdout pretends to be.
type fakeTerminal struct {
	width int
	color bool
	pager string
}

// readOutput runs lab read in-process — on term, or not on a terminal if
// term is nil — with a fake environment, and returns what it printed.
func readOutput(t *testing.T, opts ReadOptions, term *fakeTerminal, env map[string]string) (string, error) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	if term != nil {
		ios.SetStdoutTTY(true)
		ios.SetColorEnabled(term.color)
		ios.SetTerminalWidth(term.width)
		ios.SetPager(term.pager)
	}
	opts.IO = ios
	opts.Getenv = func(k string) string { return env[k] }
	err := runRead(context.Background(), &opts)
	if errOut.Len() > 0 {
		t.Logf("stderr: %s", errOut.String())
	}
	return out.String(), err
}

func TestReadWholeLessonPlain(t *testing.T) {
	for _, lang := range content.Languages {
		lesson, err := content.Load("3.1", lang)
		if err != nil {
			t.Fatal(err)
		}
		out, err := readOutput(t, ReadOptions{Lesson: "3.1", Lang: lang}, nil, nil)
		if err != nil {
			t.Fatalf("lab read 3.1 --lang %s: %v", lang, err)
		}
		if strings.Contains(out, "\x1b") {
			t.Errorf("%s: output to a non-terminal contains ANSI escapes", lang)
		}
		for _, s := range lesson.Sections {
			if !strings.Contains(out, s.Title) {
				t.Errorf("%s: section %q (%s) missing from the output", lang, s.Title, s.ID)
			}
		}
		if !strings.Contains(out, "lab check 3.1") {
			t.Errorf("%s: the lesson does not end by pointing at lab check", lang)
		}
	}
}

func TestReadOneSection(t *testing.T) {
	ru, err := content.Load("4.4", content.Russian)
	if err != nil {
		t.Fatal(err)
	}
	backoff, _ := ru.Section("backoff")
	breaker, _ := ru.Section("circuit-breaker")
	out, err := readOutput(t, ReadOptions{Lesson: "4.4", Section: "backoff", Lang: "ru"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, backoff.Title) || !strings.Contains(out, ru.Title) {
		t.Errorf("section output lacks the lesson or section title:\n%s", out[:min(len(out), 400)])
	}
	if strings.Contains(out, breaker.Title) {
		t.Error("one section's output contains another section")
	}
	if !strings.Contains(out, "lab run 4.4 --scenario external-outage") {
		t.Error("the section's demo command is missing")
	}
}

func TestReadLanguageFromLocale(t *testing.T) {
	out, err := readOutput(t, ReadOptions{Lesson: "3.1", Section: "manager"}, nil, map[string]string{"LANG": "ru_RU.UTF-8"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Урок 3.1") {
		t.Errorf("LANG=ru_RU.UTF-8 did not select Russian:\n%s", out[:min(len(out), 300)])
	}
	out, err = readOutput(t, ReadOptions{Lesson: "3.1", Section: "manager"}, nil, map[string]string{"LANG": "ru_RU.UTF-8", content.LangEnv: "en"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Lesson 3.1") {
		t.Error("LAB_LANG=en did not win over the locale")
	}
}

func TestReadIndex(t *testing.T) {
	out, err := readOutput(t, ReadOptions{Lang: "en"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"lab read 3.1", "lab read 4.4", "requeue-strategies", "circuit-breaker"} {
		if !strings.Contains(out, want) {
			t.Errorf("the lesson index lacks %q", want)
		}
	}
}

func TestReadBadInput(t *testing.T) {
	tests := []struct {
		name string
		opts ReadOptions
		want []string
	}{
		{"unknown lesson", ReadOptions{Lesson: "5.1"}, []string{`unknown lesson "5.1"`, "3.1, 4.4"}},
		{"unknown section", ReadOptions{Lesson: "3.1", Section: "nope"}, []string{`no section "nope"`, "manager", "requeue-strategies"}},
		{"unknown language", ReadOptions{Lesson: "3.1", Lang: "de"}, []string{"--lang", "en, ru"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readOutput(t, tt.opts, nil, nil)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	// Through the command line: a clear message and exit status 1.
	ios, _, _, errOut := iostreams.Test()
	code := Execute(context.Background(), ios, []string{"read", "4.4", "nope"})
	if code != 1 || !strings.Contains(errOut.String(), "lab: lesson 4.4 has no section \"nope\"") {
		t.Errorf("lab read 4.4 nope: exit %d, stderr %q", code, errOut.String())
	}
}

func TestReadOnTerminalPagesStyledText(t *testing.T) {
	section := ReadOptions{Lesson: "3.1", Section: "result", Lang: "en"}
	env := map[string]string{"GLAMOUR_STYLE": "dark"}
	out, err := readOutput(t, section, &fakeTerminal{width: 100, color: true, pager: "cat"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "\x1b[") {
		t.Error("on a terminal the output is not styled")
	}
	if !strings.Contains(out, "AddRateLimited") {
		t.Error("the pager did not pass the text through")
	}

	// A pager that cannot start: the text is printed directly.
	out, err = readOutput(t, section, &fakeTerminal{color: true, pager: "/nonexistent/pager"}, env)
	if err != nil {
		t.Fatalf("a missing pager is an error: %v", err)
	}
	if !strings.Contains(out, "AddRateLimited") {
		t.Error("without a pager nothing was printed")
	}

	// No colour (NO_COLOR, say): paged, but plain, whatever GLAMOUR_STYLE says.
	out, err = readOutput(t, section, &fakeTerminal{pager: "cat"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "\x1b") || !strings.Contains(out, "AddRateLimited") {
		t.Errorf("output without colour contains ANSI escapes, or is missing:\n%s", out)
	}
}

func TestTerminalStyle(t *testing.T) {
	for _, tc := range []struct {
		theme string
		env   map[string]string
		want  string
	}{
		{iostreams.ThemeDark, nil, "dark"},
		{iostreams.ThemeLight, nil, "light"},
		{iostreams.ThemeLight, map[string]string{"GLAMOUR_STYLE": "dracula"}, "dracula"},
		{iostreams.ThemeNone, map[string]string{"GLAMOUR_STYLE": "dracula"}, "notty"},
	} {
		if got := terminalStyle(tc.theme, func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("terminalStyle(%s, %v) = %q, want %q", tc.theme, tc.env, got, tc.want)
		}
	}
}

// TestReadWrapsAtTheTerminalsWidth: prose is wrapped at the width the
// streams report (a terminal's, or $COLUMNS in a pipe), not at a fixed 80
// or 100, and code is never wrapped: the RBAC markers stay whole.
func TestReadWrapsAtTheTerminalsWidth(t *testing.T) {
	marker := `    // +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch;delete`
	for _, width := range []int{60, 80, 150} {
		for _, term := range []*fakeTerminal{nil, {width: width, pager: "cat"}} {
			ios, _, out, _ := iostreams.Test()
			ios.SetTerminalWidth(width)
			if term != nil {
				ios.SetStdoutTTY(true)
				ios.SetPager(term.pager)
			}
			opts := ReadOptions{IO: ios, Lesson: "3.1", Lang: "en", Getenv: func(string) string { return "" }}
			if err := runRead(context.Background(), &opts); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(out.String(), "\n")
			widest := 0
			for _, l := range lines {
				// Prose, not code; a word wider than the width (a long code
				// span) stays whole on a line of its own.
				if !strings.HasPrefix(l, "    ") && strings.Contains(strings.TrimSpace(l), " ") {
					widest = max(widest, len([]rune(l)))
				}
			}
			if !slices.Contains(lines, marker) {
				t.Errorf("width %d, terminal %v: the RBAC marker is not one line", width, term != nil)
			}
			if widest > width || widest < width-10 {
				t.Errorf("width %d, terminal %v: the widest line of prose is %d", width, term != nil, widest)
			}
		}
	}
}
