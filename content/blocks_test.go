package content

import (
	"strings"
	"testing"
)

// codeBlock is one fenced block of a lesson section.
type codeBlock struct {
	lesson, lang, section string
	kind                  string // the fence's info string: go, go-wrong, text, ...
	code                  string
	line                  int // line of the first code line within the section body (1-based)
}

// where names the block for test failures.
func (b codeBlock) where() string {
	return "lessons/" + b.lesson + "/" + b.lang + ".md, section " + b.section
}

// sectionBlocks extracts the fenced blocks of a section body.
func sectionBlocks(lesson *Lesson, s Section) []codeBlock {
	var (
		blocks []codeBlock
		cur    *codeBlock
		lines  []string
	)
	for i, line := range strings.Split(s.Body, "\n") {
		if !isFence(line) {
			if cur != nil {
				lines = append(lines, line)
			}
			continue
		}
		if cur == nil {
			cur = &codeBlock{lesson: lesson.ID, lang: lesson.Lang, section: s.ID,
				kind: strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "```")), line: i + 2}
			lines = nil
			continue
		}
		cur.code = strings.Join(lines, "\n") + "\n"
		blocks = append(blocks, *cur)
		cur = nil
	}
	return blocks
}

// allLessons loads every lesson in every language; a lesson that does not
// load fails the test and is left out, so the other checks still run.
func allLessons(t *testing.T) []*Lesson {
	t.Helper()
	var lessons []*Lesson
	for _, lang := range Languages {
		for _, id := range LessonIDs() {
			l, err := Load(id, lang)
			if err != nil {
				t.Errorf("load lesson %s (%s): %v", id, lang, err)
				continue
			}
			lessons = append(lessons, l)
		}
	}
	return lessons
}

// allBlocks returns the code blocks of every lesson in every language.
func allBlocks(t *testing.T) []codeBlock {
	t.Helper()
	var blocks []codeBlock
	for _, l := range allLessons(t) {
		for _, s := range l.Sections {
			blocks = append(blocks, sectionBlocks(l, s)...)
		}
	}
	return blocks
}
