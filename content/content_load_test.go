package content

import (
	"slices"
	"strings"
	"testing"
)

func TestLoadErrorsListTheValidChoices(t *testing.T) {
	_, err := Load("5.1", English)
	if err == nil || !strings.Contains(err.Error(), "3.1, 4.4") {
		t.Errorf("Load(5.1): error %v does not list the lessons", err)
	}
	_, err = Load("3.1", "de")
	if err == nil || !strings.Contains(err.Error(), "en, ru") {
		t.Errorf("Load(3.1, de): error %v does not list the languages", err)
	}
	lesson, err := Load("3.1", English)
	if err != nil {
		t.Fatal(err)
	}
	_, err = lesson.Section("nope")
	if err == nil || !strings.Contains(err.Error(), strings.Join(lesson.SectionIDs(), ", ")) {
		t.Errorf("Section(nope): error %v does not list the sections", err)
	}
}

func TestCatalogDeclaresTheLessonTopics(t *testing.T) {
	want := map[string][]string{
		"3.1": {"manager", "reconcile", "result", "requeue-strategies", "client", "exercises"},
		"4.4": {"multi-phase", "state-machine", "external-deps", "idempotency", "rate-limiting", "backoff", "circuit-breaker", "combined", "exercises"},
	}
	for id, sections := range want {
		l, err := Load(id, English)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sections {
			if !slices.Contains(l.SectionIDs(), s) {
				t.Errorf("lesson %s has no section %q", id, s)
			}
		}
		last := l.Sections[len(l.Sections)-1]
		for _, cmd := range []string{"lab start " + id, "lab check " + id} {
			if !strings.Contains(last.Body, cmd) {
				t.Errorf("lesson %s does not end by pointing at `%s`", id, cmd)
			}
		}
	}
}

func TestParseLessonRejectsMalformedFiles(t *testing.T) {
	spec := lessonSpec{id: "9.9", sections: []sectionSpec{{id: "one"}, {id: "two"}}}
	body := strings.Repeat("text ", 10)
	tests := map[string]struct{ text, wantErr string }{
		"heading without ID":      {"# T\n\n## One\n" + body, "needs a stable ID"},
		"text before the title":   {"hello\n# T\n", "before the title"},
		"unclosed fence":          {"# T\n## One {#one}\n```go\nx\n## Two {#two}\n", "never closed"},
		"missing section":         {"# T\n## One {#one}\n" + body, "catalog declares [one two]"},
		"sections out of order":   {"# T\n## Two {#two}\n" + body + "\n## One {#one}\n" + body, "catalog declares"},
		"empty section":           {"# T\n## One {#one}\n## Two {#two}\n" + body, `section "one" is empty`},
		"unknown generated table": {"# T\n## One {#one}\n<!-- table:nope -->\n## Two {#two}\n" + body, "unknown generated table"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := parseLesson(tc.text, spec, English)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
	// A heading inside a code block is code, not a section.
	good := "# T\n## One {#one}\n```text\n## not a section\n```\n## Two {#two}\n" + body
	l, err := parseLesson(good, spec, English)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(l.Sections[0].Body, "## not a section") {
		t.Errorf("section one lost its code block: %q", l.Sections[0].Body)
	}
}

func TestSectionMarkdownShowsItsDemo(t *testing.T) {
	for _, lang := range Languages {
		l, err := Load("4.4", lang)
		if err != nil {
			t.Fatal(err)
		}
		s, err := l.Section("backoff")
		if err != nil {
			t.Fatal(err)
		}
		if s.Demo == nil {
			t.Fatal("section backoff has no demo")
		}
		want := "`lab run 4.4 --scenario external-outage --set backoff=lesson,timescale=10`"
		if md := s.Markdown(); !strings.Contains(md, want) {
			t.Errorf("%s: section markdown does not show %s", lang, want)
		}
		if md := s.Markdown(); strings.Contains(md, "```go-wrong") {
			t.Errorf("%s: display markdown still has go-wrong fences", lang)
		}
	}
	d := Demo{Lab: "3.1"}
	if got := strings.Join(d.RunArgs(), " "); got != "run 3.1" {
		t.Errorf("RunArgs of a bare demo = %q", got)
	}
}

func TestResultTableIsGeneratedFromResultCases(t *testing.T) {
	for _, lang := range Languages {
		l, err := Load("3.1", lang)
		if err != nil {
			t.Fatal(err)
		}
		s, err := l.Section("result")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(s.Body, "<!-- table:") {
			t.Fatalf("%s: the table marker was not expanded", lang)
		}
		for _, c := range ResultCases {
			calls := make([]string, len(c.Calls))
			for i, call := range c.Calls {
				calls[i] = "`" + string(call) + "`"
				if call == CallAddAfter {
					calls[i] = "`AddAfter(d)`"
				}
			}
			row := "| `" + c.Return + "`"
			if !strings.Contains(s.Body, row) || !strings.Contains(s.Body, strings.Join(calls, ", ")) {
				t.Errorf("%s: the table has no row %s with calls %s", lang, row, strings.Join(calls, ", "))
			}
		}
	}
}
