package content

import (
	"strings"
	"testing"

	xansi "github.com/charmbracelet/x/ansi"
)

func TestRenderPlainHasNoEscapes(t *testing.T) {
	for _, lang := range Languages {
		lessons, err := Lessons(lang)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lessons {
			out, err := Render(l.Markdown(), RenderOptions{})
			if err != nil {
				t.Fatalf("render %s (%s): %v", l.ID, lang, err)
			}
			if strings.Contains(out, "\x1b") {
				t.Errorf("%s (%s): plain rendering contains ANSI escapes", l.ID, lang)
			}
			if !strings.Contains(out, l.Title) {
				t.Errorf("%s (%s): rendering lost the title", l.ID, lang)
			}
			// Only code and diagrams may be wider: they are never wrapped.
			code := codeLines(l.Markdown())
			for i, line := range strings.Split(out, "\n") {
				if w := len([]rune(line)); w > DefaultWidth && !code[strings.TrimSpace(line)] {
					t.Errorf("%s (%s): rendered line %d is %d columns wide: %q", l.ID, lang, i+1, w, line)
				}
			}
		}
	}
}

func TestRenderStyledUsesColour(t *testing.T) {
	out, err := Render("# Title\n\nSome `code` and **bold**.\n", RenderOptions{Style: "dark"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "\x1b[") {
		t.Error("dark style rendered without ANSI escapes")
	}
	if _, err := Render("x", RenderOptions{Style: "no-such-style"}); err == nil {
		t.Error("an unknown style is not an error")
	}
}

// glamour's word wrap does not count hyphens inside words; Render works
// around it. Without the workaround this paragraph breaks after "per".
func TestRenderWrapsHyphenatedWordsCleanly(t *testing.T) {
	md := "What this buys you over hand-written client-go code: one shared cache per type however many controllers read it; a work queue with de-duplication and per-item backoff already wired in."
	out, err := Render(md, RenderOptions{Width: 80})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("expected 3 wrapped lines, got %d:\n%s", len(lines), out)
	}
	if strings.Contains(out, "\u2011") || !strings.Contains(out, "hand-written") {
		t.Errorf("hyphens were not restored:\n%s", out)
	}
}

// codeLines are the lines of markdown's fenced blocks, trimmed, as a set.
func codeLines(markdown string) map[string]bool {
	lines := map[string]bool{}
	inFence := false
	for _, line := range strings.Split(displayFences(markdown), "\n") {
		switch {
		case isFence(line):
			inFence = !inFence
		case inFence:
			lines[strings.TrimSpace(line)] = true
		}
	}
	return lines
}

// A paragraph, a Go line and a diagram line longer than 80 columns.
const (
	longProse = "A controller reconciles one object at a time; the work queue hands it the keys, " +
		"and the rate limiter decides how long a failing key waits before it is tried again."
	longCode    = `// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch;delete`
	longDiagram = `  ├─ err != nil ─┬─ TerminalError? ─ yes ─▶ log, count; queue nothing ──────────────────▶ Done`
)

// TestRenderNeverWrapsCode: code blocks and diagrams come out with every
// line whole at any width (a long line stays long), in plain text and in
// colour, while prose wraps at the width given.
func TestRenderNeverWrapsCode(t *testing.T) {
	md := longProse + "\n\n```go\n" + longCode + "\nif err != nil {\n\treturn err\n}\n```\n\n" +
		longProse + "\n\n```text\n" + longDiagram + "\n```\n"
	for _, style := range []string{"", "dark"} {
		for _, width := range []int{60, 80} {
			out, err := Render(displayFences(md), RenderOptions{Width: width, Style: style})
			if err != nil {
				t.Fatal(err)
			}
			plain := xansi.Strip(out)
			lines := strings.Split(plain, "\n")
			has := func(want string) bool {
				for _, l := range lines {
					if strings.TrimRight(strings.TrimSpace(l), " ") == strings.TrimSpace(want) {
						return true
					}
				}
				return false
			}
			for _, want := range []string{longCode, "if err != nil {", longDiagram} {
				if !has(want) {
					t.Errorf("style %q, width %d: %q is not one whole line:\n%s", style, width, want, plain)
				}
			}
			prose := 0
			for _, l := range lines {
				if w := xansi.StringWidth(strings.TrimRight(l, " ")); w > width && !has(l) {
					t.Errorf("style %q, width %d: a prose line is %d wide: %q", style, width, w, l)
				}
				if strings.Contains(l, "work queue") || strings.Contains(l, "rate limiter") {
					prose++
				}
			}
			if prose < 2 {
				t.Errorf("style %q, width %d: the paragraph was not wrapped:\n%s", style, width, plain)
			}
		}
	}
}

// TestRenderWrapsProseAtTheWidth: prose fills the width it is given (less
// the margin on the right), up to a word, rather than a fixed one.
func TestRenderWrapsProseAtTheWidth(t *testing.T) {
	for _, width := range []int{60, 80, 150} {
		out, err := Render(longProse+" "+longProse, RenderOptions{Width: width})
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.Trim(out, "\n"), "\n")
		first := lines[0]
		next := strings.Fields(lines[1])[0]
		if w := xansi.StringWidth(first); w > width || w+1+len(next) <= width-2 {
			t.Errorf("width %d: the first line is %d wide and %q would have fit:\n%s", width, w, next, out)
		}
	}
}

// TestRenderKeepsInlineCodeWhole: glamour's wrapper breaks lines after a
// dot or a comma, and at the spaces it pads code spans with; a code span
// is broken only at its own spaces, and no line is left with a lone "(".
func TestRenderKeepsInlineCodeWhole(t *testing.T) {
	sentence := "The original lesson suggests returning `ctrl.Result{RequeueAfter: d}, err` from the reconciler: " +
		"the controller ignores it (see `handler.EnqueueRequestsFromMapFunc`, `source.Kind`, `builder.WithPredicates(p)`) " +
		"and retries through `workqueue.TypedRateLimitingInterface.AddRateLimited(key)` instead."
	md := sentence + "\n\n- **In a list** " + sentence + "\n- " + sentence + "\n"
	for _, style := range []string{"", "dark"} {
		for width := 40; width <= 100; width += 3 {
			out, err := Render(md, RenderOptions{Width: width, Style: style})
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(xansi.Strip(out), "\n") {
				line = strings.TrimSpace(line)
				for _, torn := range []string{"ctrl.", "handler.", "source.", "builder.", "workqueue.", "("} {
					if strings.HasSuffix(line, torn) {
						t.Errorf("style %q, width %d: a line ends with %q: %q", style, width, torn, line)
					}
				}
				if strings.HasPrefix(line, "Result{") || strings.HasPrefix(line, "EnqueueRequests") || strings.HasPrefix(line, "):") {
					t.Errorf("style %q, width %d: a code span was torn: %q", style, width, line)
				}
			}
		}
	}
}

// TestRenderPlainQuotesCode: without colour, inline code keeps its
// backticks, and with CodeBar a code block has a bar down its left.
func TestRenderPlainQuotesCode(t *testing.T) {
	md := "Return `ctrl.Result{}` here.\n\n```go\nreturn ctrl.Result{}, nil\n```\n"
	out, err := Render(md, RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Return `ctrl.Result{}` here.") || !strings.Contains(out, "\n    return ctrl.Result{}, nil\n") {
		t.Errorf("plain:\n%s", out)
	}
	out, err = Render(md, RenderOptions{CodeBar: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "\n  │ return ctrl.Result{}, nil\n") || strings.Contains(out, "│ Return") {
		t.Errorf("plain with a bar:\n%s", out)
	}
}

// TestRenderTablesUseTheirWidth: a table gets TableWidth when it is wider
// than the prose's, so its cells need not break words.
func TestRenderTablesUseTheirWidth(t *testing.T) {
	md := longProse + "\n\n| You return | Queue calls | Reconciled again |\n|---|---|---|\n" +
		"| `ctrl.Result{RequeueAfter: d}, nil` | `Forget`, `AddAfter(d)`, `Done` | after d; failures reset, so backoff starts over |\n"
	out, err := Render(md, RenderOptions{Width: 80, TableWidth: 118})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "`ctrl.Result{RequeueAfter: d}, nil`") {
		t.Errorf("the table's first cell is broken:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "controller reconciles") && xansi.StringWidth(line) > 80 {
			t.Errorf("prose took the table's width: %q", line)
		}
	}
}

// TestLessonsHaveNoBreakStandIns: the characters Render puts in for the
// ones the wrapper breaks at never occur in a lesson, so turning them
// back changes nothing else.
func TestLessonsHaveNoBreakStandIns(t *testing.T) {
	for _, lang := range Languages {
		lessons, err := Lessons(lang)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lessons {
			for _, r := range []string{nonBreakingHyphen, dotStandIn, commaStandIn, semicolonStandIn} {
				if strings.Contains(l.Markdown(), r) {
					t.Errorf("lesson %s (%s) contains %U", l.ID, lang, []rune(r)[0])
				}
			}
		}
	}
}

// TestRenderTablesNeverBreakWords: the Result table of lesson 3.1 comes
// out with every identifier whole at every width: as a table where its
// columns hold their words, else as a list.
func TestRenderTablesNeverBreakWords(t *testing.T) {
	lesson, err := Load("3.1", English)
	if err != nil {
		t.Fatal(err)
	}
	section, err := lesson.Section("result")
	if err != nil {
		t.Fatal(err)
	}
	for _, style := range []string{"", "dark"} {
		for _, width := range []int{50, 60, 77, 80, 100, 117} {
			out, err := Render(section.Markdown(), RenderOptions{Width: width, Style: style})
			if err != nil {
				t.Fatal(err)
			}
			plain := strings.ReplaceAll(xansi.Strip(out), "`", "")
			// The table alone: from its heading to the paragraph after it.
			plain = plain[strings.Index(plain, "You return"):strings.Index(plain, "The rate limiter's delay is")]
			for _, word := range []string{"ctrl.Result{RequeueAfter:", "reconcile.TerminalError(err)", "AddRateLimited,", "AddAfter(d),", "limiter's", "reset"} {
				if !strings.Contains(plain, word) {
					t.Errorf("style %q, width %d: %q is broken:\n%s", style, width, word, plain)
				}
			}
		}
	}
}
