package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// Exercise is one exercise of the learner's workspace as the exercises layer shows it.
type Exercise struct {
	Number int
	ID     string   // "results"
	Title  string   // already in the UI language
	Files  []string // workspace-relative files the learner edits
	// Status is the last check's result: "pass", "fail", "error", or ""
	// (never checked).
	Status    string
	CheckedAt time.Time // zero when never checked
}

// ExercisesMsg sets the workspace and its exercises' progress; lab start sends it
// once at start and again whenever the progress file changes (the learner runs
// `lab check` in another terminal).
type ExercisesMsg struct {
	Workspace string // as shown to the learner, e.g. "./lab-3.1"
	Created   bool   // this start created the workspace
	Exercises []Exercise
	Notice    string // optional one-line note, e.g. a corrupt progress file was rebuilt
}

// The statuses a check reports (the values labs/workspace stores).
const (
	exercisePass  = "pass"
	exerciseFail  = "fail"
	exerciseError = "error"
)

var (
	phraseExercises     = phrase{en: "Exercises", ru: "Упражнения"}
	phraseExercisesHint = phrase{en: "your progress, kept up to date by lab check",
		ru: "ваш прогресс, его обновляет lab check"}
	phraseWorkspace   = phrase{en: "workspace %s", ru: "рабочая папка %s"}
	phraseCreatedNow  = phrase{en: "created now", ru: "создана сейчас"}
	phrasePassedCount = phrase{en: "%d/%d passed", ru: "пройдено %d/%d"}
	phraseAllDone     = phrase{en: "all done", ru: "всё готово"}
	phraseNoExercises = phrase{en: "this workspace has no exercises", ru: "в этой рабочей папке нет упражнений"}
	phraseNext        = phrase{en: "next ▸", ru: "далее ▸"}
	phraseFiles       = phrase{en: "edit", ru: "правьте"}
	phraseHowTo       = phrase{en: "Edit the files, then run lab check in another terminal (or lab check --watch).",
		ru: "Правьте файлы, затем — lab check в другом терминале (или lab check --watch)."}
	phraseHowToMore = phrase{en: "Stuck? lab hint. This list updates by itself after every check.",
		ru: "Застряли? lab hint. Список обновляется сам после каждой проверки."}
	phraseNoWorkspace = phrase{en: "no workspace, so no exercises to show",
		ru: "рабочей папки нет, поэтому нет и упражнений"}

	phraseStatusPass      = phrase{en: "✓ passed", ru: "✓ пройдено"}
	phraseStatusFail      = phrase{en: "✗ failed", ru: "✗ не пройдено"}
	phraseStatusError     = phrase{en: "! error", ru: "! ошибка"}
	phraseStatusUnchecked = phrase{en: "· not checked", ru: "· не проверено"}

	phraseNowPasses = phrase{en: "✓ %s passed", ru: "✓ %s пройдено"}
	phraseNowFails  = phrase{en: "✗ %s failed — lab check says why", ru: "✗ %s не пройдено — lab check покажет почему"}
	phraseNowErrors = phrase{en: "! %s: the check could not run — lab check says why",
		ru: "! %s: проверка не запустилась — lab check покажет почему"}
	phraseEveryPass = phrase{en: "every exercise passes", ru: "все упражнения пройдены"}

	phraseJustNow    = phrase{en: "just now", ru: "только что"}
	phraseSecondsAgo = phrase{en: "%ds ago", ru: "%d с назад"}
	phraseMinutesAgo = phrase{en: "%dm ago", ru: "%d мин назад"}
	phraseHoursAgo   = phrase{en: "%dh ago", ru: "%d ч назад"}
	phraseDaysAgo    = phrase{en: "%dd ago", ru: "%d дн назад"}
)

// lang is the language of the UI's own text: the lesson pane's, which
// New resolves from Options.Lang.
func (m Model) lang() string { return m.lesson.lang }

// setExercises takes in the workspace's progress. Once a previous message
// is known, exercises whose status changed are announced on the status
// line: the learner checks in another terminal and looks back here.
func (m *Model) setExercises(msg ExercisesMsg) {
	// The sender may reuse its slice; the model must not change under it.
	msg.Exercises = slices.Clone(msg.Exercises)
	prev := m.exercises
	m.exercises = &msg
	var news []string
	bad := false
	if prev != nil {
		news, bad = exerciseChanges(prev.Exercises, msg.Exercises, m.lang())
	}
	if msg.Notice != "" && (prev == nil || prev.Notice != msg.Notice) {
		news, bad = append([]string{msg.Notice}, news...), true
	}
	if len(news) > 0 {
		m.setStatus(strings.Join(news, " · "), bad)
	}
	m.refreshControls()
}

// exerciseChanges says which exercises now pass, fail or cannot be
// checked; bad is true when any does not pass.
func exerciseChanges(prev, next []Exercise, lang string) (news []string, bad bool) {
	was := make(map[string]string, len(prev))
	for _, e := range prev {
		was[e.ID] = e.Status
	}
	passedNow := false
	for _, e := range next {
		if e.Status == was[e.ID] {
			continue
		}
		switch e.Status {
		case exercisePass:
			news, passedNow = append(news, fmt.Sprintf(phraseNowPasses.in(lang), e.ID)), true
		case exerciseFail:
			news, bad = append(news, fmt.Sprintf(phraseNowFails.in(lang), e.ID)), true
		case exerciseError:
			news, bad = append(news, fmt.Sprintf(phraseNowErrors.in(lang), e.ID)), true
		}
	}
	if passedNow && passedCount(next) == len(next) {
		news = append(news, phraseEveryPass.in(lang))
	}
	return news, bad
}

// toggleExercises opens or closes the layer; it shares the lesson's slot,
// so opening one closes the other.
func (m *Model) toggleExercises() {
	if m.exercises == nil {
		m.setStatus(phraseNoWorkspace.in(m.lang()), false)
		return
	}
	m.exercisesOpen = !m.exercisesOpen
	m.lessonOpen = false
	m.refreshControls()
}

func passedCount(exercises []Exercise) int {
	n := 0
	for _, e := range exercises {
		if e.Status == exercisePass {
			n++
		}
	}
	return n
}

// nextExercise is the index of the first exercise not yet passed, -1 when
// every one passes.
func nextExercise(exercises []Exercise) int {
	return slices.IndexFunc(exercises, func(e Exercise) bool { return e.Status != exercisePass })
}

// exercisesBadge is the header's compact progress, "" without a workspace.
func (m Model) exercisesBadge() string {
	ex := m.exercises
	if ex == nil || len(ex.Exercises) == 0 {
		return ""
	}
	passed, total := passedCount(ex.Exercises), len(ex.Exercises)
	ink := m.st.Value
	if passed == total {
		ink = m.st.OK
	}
	return ink.Render(fmt.Sprintf("ex %d/%d", passed, total))
}

// statusLabel is an exercise's status as glyph and word; the glyph keeps
// it readable without colour.
func (m Model) statusLabel(status string) string {
	st, lang := m.st, m.lang()
	switch status {
	case exercisePass:
		return st.OK.Render(phraseStatusPass.in(lang))
	case exerciseFail:
		return st.Bad.Render(phraseStatusFail.in(lang))
	case exerciseError:
		return st.Warn.Render(phraseStatusError.in(lang))
	case "":
		return st.Faint.Render(phraseStatusUnchecked.in(lang))
	}
	// A status this build does not know: shown as is rather than hidden.
	return st.Warn.Render("? " + status)
}

// checkedAgo says when an exercise was last checked, by the model clock.
func (m Model) checkedAgo(e Exercise) string {
	if e.CheckedAt.IsZero() {
		return ""
	}
	return agoText(m.clock().Sub(e.CheckedAt), m.lang())
}

// agoText is a past moment relative to now, in the largest whole unit.
func agoText(d time.Duration, lang string) string {
	var unit phrase
	var n time.Duration
	switch {
	case d < 5*time.Second: // including a CheckedAt a little ahead of this clock
		return phraseJustNow.in(lang)
	case d < time.Minute:
		unit, n = phraseSecondsAgo, d/time.Second
	case d < time.Hour:
		unit, n = phraseMinutesAgo, d/time.Minute
	case d < 24*time.Hour:
		unit, n = phraseHoursAgo, d/time.Hour
	default:
		unit, n = phraseDaysAgo, d/(24*time.Hour)
	}
	return fmt.Sprintf(unit.in(lang), n)
}

// Ranks of the layer's lines: when the pane is too short, whole ranks are
// left out, lowest first, so what is left still reads as one list.
const (
	rankPassedFiles = iota + 1 // files of exercises already done
	rankSpacing
	rankFiles // files of the exercises after the next one
	rankHowToMore
	rankHowTo
	rankNextFiles // what to edit now
	rankNotice
	rankKeep // the summary and the exercises: clipped, never left out
)

type rankedLine struct {
	rank int
	text string
}

// fitRanked keeps at most h lines, leaving out the lowest ranks first.
func fitRanked(lines []rankedLine, h int) []string {
	lines = slices.Clone(lines) // DeleteFunc below must not touch the caller's lines
	for rank := 1; len(lines) > h && rank < rankKeep; rank++ {
		lines = slices.DeleteFunc(lines, func(l rankedLine) bool { return l.rank == rank })
	}
	out := make([]string, 0, min(len(lines), h))
	for _, l := range lines[:min(len(lines), h)] {
		out = append(out, l.text)
	}
	return out
}

// exercisesTitle and exercisesHint label the layer's frame.
func (m Model) exercisesTitle() string { return phraseExercises.in(m.lang()) }
func (m Model) exercisesHint() string  { return phraseExercisesHint.in(m.lang()) }

// exercisesLines: the workspace and its progress, one row per exercise
// with the files to edit below it, then how to check.
func (m Model) exercisesLines(w, h int) []string {
	st, lang, ex := m.st, m.lang(), m.exercises
	if h <= 0 || ex == nil {
		return nil
	}
	var lines []rankedLine
	add := func(rank int, text string) { lines = append(lines, rankedLine{rank, text}) }

	summary := st.Bold.Render(fmt.Sprintf(phraseWorkspace.in(lang), ex.Workspace))
	if ex.Created {
		summary += st.Faint.Render(" · " + phraseCreatedNow.in(lang))
	}
	passed, total := passedCount(ex.Exercises), len(ex.Exercises)
	count := fmt.Sprintf(phrasePassedCount.in(lang), passed, total)
	if passed == total && total > 0 {
		count += " · " + phraseAllDone.in(lang)
	}
	add(rankKeep, summary+st.Faint.Render(" · ")+st.Value.Render(count))
	if ex.Notice != "" {
		add(rankNotice, st.Warn.Render("! "+ex.Notice))
	}
	add(rankSpacing, "")
	if total == 0 {
		add(rankKeep, st.Faint.Render(phraseNoExercises.in(lang)))
	}
	for _, row := range m.exerciseRows(w) {
		add(row.rank, row.text)
	}
	add(rankSpacing, "")
	for _, how := range []struct {
		rank int
		text phrase
	}{{rankHowTo, phraseHowTo}, {rankHowToMore, phraseHowToMore}} {
		for _, l := range strings.Split(ansi.Wrap(how.text.in(lang), max(w, 1), ""), "\n") {
			add(how.rank, st.Faint.Render(l))
		}
	}
	return fitRanked(lines, h)
}

// exerciseRows are the exercises in aligned columns (next-marker, number,
// title, status, when), each followed by its files.
func (m Model) exerciseRows(w int) []rankedLine {
	st, lang, exercises := m.st, m.lang(), m.exercises.Exercises
	next := nextExercise(exercises)
	mark := phraseNext.in(lang) + " "
	markW := 0
	if next >= 0 {
		markW = ansi.StringWidth(mark)
	}
	var numW, titleW, statusW, whenW int
	statuses, whens := make([]string, len(exercises)), make([]string, len(exercises))
	for i, e := range exercises {
		statuses[i], whens[i] = m.statusLabel(e.Status), m.checkedAgo(e)
		numW = max(numW, len(strconv.Itoa(e.Number)))
		titleW = max(titleW, ansi.StringWidth(e.Title))
		statusW = max(statusW, ansi.StringWidth(statuses[i]))
		whenW = max(whenW, ansi.StringWidth(whens[i]))
	}
	// Titles give way first when the pane is narrow; the status stays in view.
	indent := markW + numW + 2
	titleW = min(titleW, max(w-indent-2-statusW-2-whenW, 8))
	var rows []rankedLine
	for i, e := range exercises {
		lead, title := strings.Repeat(" ", markW), st.Plain.Render(pad(e.Title, titleW))
		if i == next {
			lead, title = st.Info.Render(mark), st.Bold.Render(pad(e.Title, titleW))
		}
		row := lead + fmt.Sprintf("%*d. ", numW, e.Number) + title + "  " + pad(statuses[i], statusW) + "  " + st.Faint.Render(whens[i])
		rows = append(rows, rankedLine{rankKeep, row})
		if len(e.Files) == 0 {
			continue
		}
		rank := rankFiles
		switch {
		case i == next:
			rank = rankNextFiles
		case e.Status == exercisePass:
			rank = rankPassedFiles
		}
		files := phraseFiles.in(lang) + " " + strings.Join(e.Files, ", ")
		rows = append(rows, rankedLine{rank, strings.Repeat(" ", indent) + st.Faint.Render(files)})
	}
	return rows
}
