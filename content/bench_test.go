package content

import "testing"

// BenchmarkLoad measures parsing one lesson file (the TUI may load on
// every language switch).
func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := Load("4.4", Russian); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderSection measures rendering one section with colour, as
// the TUI's lesson pane or `lab read 4.4 combined` does.
func BenchmarkRenderSection(b *testing.B) {
	lesson, err := Load("4.4", English)
	if err != nil {
		b.Fatal(err)
	}
	section, err := lesson.Section("combined")
	if err != nil {
		b.Fatal(err)
	}
	md := section.Markdown()
	for b.Loop() {
		if _, err := Render(md, RenderOptions{Width: 80, Style: "dark"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderLessonPlain measures `lab read 3.1 | cat`.
func BenchmarkRenderLessonPlain(b *testing.B) {
	lesson, err := Load("3.1", English)
	if err != nil {
		b.Fatal(err)
	}
	md := lesson.Markdown()
	for b.Loop() {
		if _, err := Render(md, RenderOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
