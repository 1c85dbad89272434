package content

import (
	"strings"
	"testing"
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
			for i, line := range strings.Split(out, "\n") {
				if w := len([]rune(line)); w > DefaultWidth {
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
