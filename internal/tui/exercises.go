package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
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
	// Created: this start created the workspace, just before the view
	// came up; the layer says how long ago from the first message on.
	Created   bool
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
	phraseCreated     = phrase{en: "created %s", ru: "создана %s"}
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

// exercisesLayer is the learner's workspace and its progress, drawn as
// the layer below the operator; a component of the root, which gives it
// its size (SetSize) and draws its lines (View) in the layer's frame. Its
// one key, x, opens and closes it; the root acts on it, since the layer
// shares its place with the lesson.
type exercisesLayer struct {
	st    Styles
	lang  string // of the UI's own text: the lesson pane's
	clock func() time.Time
	ws    *ExercisesMsg // nil: no workspace
	// createdAt is when the layer first heard this start created the
	// workspace (zero if it did not): "created 10m ago" stays true.
	createdAt time.Time
	keys      exercisesKeys

	width, height int // inside the frame
}

type exercisesKeys struct{ Toggle key.Binding }

func newExercisesLayer(st Styles, lang string, clock func() time.Time) *exercisesLayer {
	return &exercisesLayer{st: st, lang: lang, clock: clock,
		keys: exercisesKeys{Toggle: bind([]string{"x"}, "x", "exercises")}}
}

// configure enables x (live without a workspace it still answers: it says
// there is none) and names what it does now.
func (x *exercisesLayer) configure(enabled, open bool) {
	x.keys.Toggle.SetEnabled(enabled)
	if open {
		x.keys.Toggle.SetHelp("x", "close exercises")
	} else {
		x.keys.Toggle.SetHelp("x", "exercises")
	}
}

// ShortHelp offers x in the footer only with a workspace to show; the ?
// overlay lists it wherever it answers, if only to say there is none.
func (x *exercisesLayer) ShortHelp() []key.Binding {
	if !x.known() {
		return nil
	}
	return []key.Binding{x.keys.Toggle}
}

func (x *exercisesLayer) FullHelp() [][]key.Binding {
	return [][]key.Binding{{x.keys.Toggle}}
}

// SetSize gives the layer the cells inside its frame.
func (x *exercisesLayer) SetSize(w, h int) { x.width, x.height = w, h }

// known reports whether there is a workspace to show.
func (x *exercisesLayer) known() bool { return x.ws != nil }

// set takes in the workspace's progress and says what is news: once a
// previous message is known, the exercises whose status changed (the
// learner checks in another terminal and looks back here), and a notice
// not said yet. bad is true when any of it is not good news.
func (x *exercisesLayer) set(msg ExercisesMsg) (news []string, bad bool) {
	// The sender may reuse its slice; the layer must not change under it.
	msg.Exercises = slices.Clone(msg.Exercises)
	prev := x.ws
	x.ws = &msg
	if msg.Created && x.createdAt.IsZero() {
		x.createdAt = x.clock()
	}
	if prev != nil {
		news, bad = exerciseChanges(prev.Exercises, msg.Exercises, x.lang)
	}
	if msg.Notice != "" && (prev == nil || prev.Notice != msg.Notice) {
		news, bad = append([]string{msg.Notice}, news...), true
	}
	return news, bad
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

// badge is the header's compact progress, "" without a workspace.
func (x *exercisesLayer) badge() string {
	ex := x.ws
	if ex == nil || len(ex.Exercises) == 0 {
		return ""
	}
	passed, total := passedCount(ex.Exercises), len(ex.Exercises)
	ink := x.st.Value
	if passed == total {
		ink = x.st.OK
	}
	return ink.Render(fmt.Sprintf("ex %d/%d", passed, total))
}

// statusLabel is an exercise's status as glyph and word; the glyph keeps
// it readable without colour.
func (x *exercisesLayer) statusLabel(status string) string {
	st, lang := x.st, x.lang
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
func (x *exercisesLayer) checkedAgo(e Exercise) string {
	if e.CheckedAt.IsZero() {
		return ""
	}
	return agoText(x.clock().Sub(e.CheckedAt), x.lang)
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

// Title and Hint label the layer's frame.
func (x *exercisesLayer) Title() string { return phraseExercises.in(x.lang) }
func (x *exercisesLayer) Hint() string  { return phraseExercisesHint.in(x.lang) }

// View is the layer's lines: the workspace and its progress, one row per
// exercise with the files to edit below it, then how to check.
func (x *exercisesLayer) View() []string {
	st, lang, ex, w, h := x.st, x.lang, x.ws, x.width, x.height
	if h <= 0 || ex == nil {
		return nil
	}
	var lines []rankedLine
	add := func(rank int, text string) { lines = append(lines, rankedLine{rank, text}) }

	summary := st.Bold.Render(fmt.Sprintf(phraseWorkspace.in(lang), ex.Workspace))
	if ex.Created {
		summary += st.Faint.Render(" · " + fmt.Sprintf(phraseCreated.in(lang), agoText(x.clock().Sub(x.createdAt), lang)))
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
	for _, row := range x.rows(w) {
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

// rows are the exercises in aligned columns (next-marker, number,
// title, status, when), each followed by its files.
func (x *exercisesLayer) rows(w int) []rankedLine {
	st, lang, exercises := x.st, x.lang, x.ws.Exercises
	next := nextExercise(exercises)
	mark := phraseNext.in(lang) + " "
	markW := 0
	if next >= 0 {
		markW = ansi.StringWidth(mark)
	}
	var numW, titleW, statusW, whenW int
	statuses, whens := make([]string, len(exercises)), make([]string, len(exercises))
	for i, e := range exercises {
		statuses[i], whens[i] = x.statusLabel(e.Status), x.checkedAgo(e)
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
