package content

import (
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"strings"

	"github.com/operator-lab/lab/internal/l10n"
)

//go:embed lessons
var lessonFiles embed.FS

// Lesson is one lesson in one language.
type Lesson struct {
	ID    string // "3.1"
	Lang  string // "en" or "ru"
	Title string // the level-one heading
	// Intro is the markdown between the title and the first section.
	Intro    string
	Sections []Section
}

// Section is one addressable part of a lesson.
type Section struct {
	ID    string // stable across languages: "manager", "result", ...
	Title string // in the lesson's language
	// Body is the section's markdown without its heading, with generated
	// tables filled in. Code fences keep their exact info strings (go,
	// go-wrong, go-fragment, text, ...); Markdown() prepares them for display.
	Body string
	// Demo is what the section can show on the running operator, or nil.
	Demo *Demo

	lang string
}

// Lang is the language the section is written in ("en" or "ru").
func (s Section) Lang() string { return s.lang }

// Load returns a lesson in a language ("en" or "ru").
func Load(lessonID, lang string) (*Lesson, error) {
	spec, err := findLesson(lessonID)
	if err != nil {
		return nil, err
	}
	if _, err := ParseLang(lang); err != nil {
		return nil, err
	}
	path := "lessons/" + lessonID + "/" + lang + ".md"
	raw, err := fs.ReadFile(lessonFiles, path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	lesson, err := parseLesson(string(raw), spec, lang)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return lesson, nil
}

// Lessons loads every lesson in a language, in course order.
func Lessons(lang string) ([]*Lesson, error) {
	var lessons []*Lesson
	for _, id := range LessonIDs() {
		l, err := Load(id, lang)
		if err != nil {
			return nil, err
		}
		lessons = append(lessons, l)
	}
	return lessons, nil
}

// SectionIDs lists the lesson's section IDs in reading order.
func (l *Lesson) SectionIDs() []string {
	ids := make([]string, len(l.Sections))
	for i, s := range l.Sections {
		ids[i] = s.ID
	}
	return ids
}

// Section finds a section by ID; the error lists the valid IDs.
func (l *Lesson) Section(id string) (Section, error) {
	for _, s := range l.Sections {
		if s.ID == id {
			return s, nil
		}
	}
	return Section{}, fmt.Errorf("lesson %s has no section %q: choose one of %s",
		l.ID, id, strings.Join(l.SectionIDs(), ", "))
}

// Markdown is the whole lesson ready for display: title, intro, a list of
// sections with their IDs (what `lab read LESSON SECTION` takes), then every
// section.
func (l *Lesson) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", l.Title)
	if l.Intro != "" {
		b.WriteString(l.Intro)
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, "**%s** (`lab read %s SECTION`):\n\n", l10n.For(l.Lang).Text("Sections"), l.ID)
	for _, s := range l.Sections {
		fmt.Fprintf(&b, "- `%s` — %s\n", s.ID, s.Title)
	}
	for _, s := range l.Sections {
		b.WriteString("\n")
		b.WriteString(s.Markdown())
	}
	return b.String()
}

// Markdown is the section ready for display: its heading, its body with code
// fences made renderable, and, when it has a demo, the command that shows it.
func (s Section) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", s.Title)
	b.WriteString(displayFences(s.Body))
	b.WriteString("\n")
	if s.Demo != nil {
		fmt.Fprintf(&b, "\n▶ %s `lab %s`\n", l10n.For(s.lang).Text("See it on the running operator (in `lab start`, open the lesson with `L` and press `w` in this section):"), strings.Join(s.Demo.RunArgs(), " "))
	}
	return b.String()
}

var (
	sectionHeading = regexp.MustCompile(`^## (.+?) \{#([a-z0-9-]+)\}$`)
	tableMarker    = regexp.MustCompile(`^<!-- table:([a-z0-9-]+) -->$`)
)

// parseLesson splits a lesson file into title, intro and sections and checks
// the sections against the catalog.
func parseLesson(text string, spec lessonSpec, lang string) (*Lesson, error) {
	lesson := &Lesson{ID: spec.id, Lang: lang}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var (
		current *Section
		body    []string
		inFence bool
	)
	flush := func() {
		joined := strings.TrimSpace(strings.Join(body, "\n"))
		if current == nil {
			lesson.Intro = joined
		} else {
			current.Body = joined
			lesson.Sections = append(lesson.Sections, *current)
		}
		body = nil
	}
	for i, line := range lines {
		lineNo := i + 1
		if isFence(line) {
			inFence = !inFence
			body = append(body, line)
			continue
		}
		if inFence {
			body = append(body, line)
			continue
		}
		switch {
		case strings.HasPrefix(line, "# "):
			if lesson.Title != "" {
				return nil, fmt.Errorf("line %d: a second title %q (only one level-one heading per lesson)", lineNo, line)
			}
			lesson.Title = strings.TrimSpace(strings.TrimPrefix(line, "# "))
		case strings.HasPrefix(line, "## "):
			m := sectionHeading.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("line %d: section heading %q needs a stable ID: \"## Title {#id}\"", lineNo, line)
			}
			flush()
			current = &Section{ID: m[2], Title: m[1], lang: lang}
		case tableMarker.MatchString(line):
			name := tableMarker.FindStringSubmatch(line)[1]
			table, ok := tables[name]
			if !ok {
				return nil, fmt.Errorf("line %d: unknown generated table %q", lineNo, name)
			}
			body = append(body, strings.TrimRight(table(lang), "\n"))
		default:
			if lesson.Title == "" && strings.TrimSpace(line) != "" {
				return nil, fmt.Errorf("line %d: text before the title; a lesson starts with \"# Title\"", lineNo)
			}
			body = append(body, line)
		}
	}
	if inFence {
		return nil, fmt.Errorf("a code fence is never closed")
	}
	flush()
	if lesson.Title == "" {
		return nil, fmt.Errorf("no title (\"# Title\")")
	}
	if err := matchCatalog(lesson, spec); err != nil {
		return nil, err
	}
	return lesson, nil
}

// matchCatalog checks that a language file has exactly the declared sections,
// in order, each with text, and attaches the declared demos.
func matchCatalog(lesson *Lesson, spec lessonSpec) error {
	got := lesson.SectionIDs()
	want := make([]string, len(spec.sections))
	for i, s := range spec.sections {
		want[i] = s.id
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		return fmt.Errorf("sections are [%s], the catalog declares [%s]", strings.Join(got, " "), strings.Join(want, " "))
	}
	for i := range lesson.Sections {
		if lesson.Sections[i].Title == "" || lesson.Sections[i].Body == "" {
			return fmt.Errorf("section %q is empty", lesson.Sections[i].ID)
		}
		lesson.Sections[i].Demo = spec.sections[i].demo
	}
	return nil
}

// isFence reports whether a line opens or closes a fenced code block.
func isFence(line string) bool {
	return strings.HasPrefix(strings.TrimLeft(line, " "), "```")
}

// Code fence kinds. Plain "go" blocks are compiled and vetted by the content
// tests; the others are shown as Go but deliberately not compiled.
const (
	fenceGo         = "go"
	fenceGoWrong    = "go-wrong"    // code shown as "don't do this" (often the original lesson's)
	fenceGoFragment = "go-fragment" // an excerpt that cannot compile on its own
)

// displayFences prepares code blocks for display: the content-only fence
// kinds become "go" so the renderer highlights them, and tabs become four
// spaces, because the renderer counts a tab as one column when it wraps
// while a terminal shows up to eight.
func displayFences(markdown string) string {
	lines := strings.Split(markdown, "\n")
	inFence := false
	for i, line := range lines {
		if !isFence(line) {
			if inFence {
				lines[i] = strings.ReplaceAll(line, "\t", "    ")
			}
			continue
		}
		inFence = !inFence
		indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
		info := strings.TrimPrefix(strings.TrimLeft(line, " "), "```")
		if info == fenceGoWrong || info == fenceGoFragment {
			lines[i] = indent + "```" + fenceGo
		}
	}
	return strings.Join(lines, "\n")
}
