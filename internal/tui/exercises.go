package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/operator-lab/lab/internal/l10n"
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

// exercisesLayer is the learner's workspace and its progress, drawn as
// the layer below the operator; a component of the root, which gives it
// its size (SetSize) and draws its lines (View) in the layer's frame. Its
// one key, x, opens and closes it; the root acts on it, since the layer
// shares its place with the lesson.
type exercisesLayer struct {
	st    Styles
	say   l10n.Printer
	clock func() time.Time
	ws    *ExercisesMsg // nil: no workspace
	// createdAt is when the layer first heard this start created the
	// workspace (zero if it did not): "created 10m ago" stays true.
	createdAt time.Time
	keys      exercisesKeys

	width, height int // inside the frame
}

type exercisesKeys struct{ Toggle key.Binding }

func newExercisesLayer(st Styles, say l10n.Printer, clock func() time.Time) *exercisesLayer {
	return &exercisesLayer{st: st, say: say, clock: clock,
		keys: exercisesKeys{Toggle: bind([]string{"x"}, "x", say.Text("exercises"))}}
}

// configure enables x (live without a workspace it still answers: it says
// there is none) and names what it does now.
func (x *exercisesLayer) configure(enabled, open bool) {
	x.keys.Toggle.SetEnabled(enabled)
	if open {
		x.keys.Toggle.SetHelp("x", x.say.Text("close exercises"))
	} else {
		x.keys.Toggle.SetHelp("x", x.say.Text("exercises"))
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
		news, bad = exerciseChanges(prev.Exercises, msg.Exercises, x.say)
	}
	if msg.Notice != "" && (prev == nil || prev.Notice != msg.Notice) {
		news, bad = append([]string{msg.Notice}, news...), true
	}
	return news, bad
}

// exerciseChanges says which exercises now pass, fail or cannot be
// checked; bad is true when any does not pass.
func exerciseChanges(prev, next []Exercise, say l10n.Printer) (news []string, bad bool) {
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
			news, passedNow = append(news, say.Textf("✓ %s passed", e.ID)), true
		case exerciseFail:
			news, bad = append(news, say.Textf("✗ %s failed — lab check says why", e.ID)), true
		case exerciseError:
			news, bad = append(news, say.Textf("! %s: the check could not run — lab check says why", e.ID)), true
		}
	}
	if passedNow && passedCount(next) == len(next) {
		news = append(news, say.Text("every exercise passes"))
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
	return ink.Render(x.say.Textf("ex %d/%d", passed, total))
}

// statusLabel is an exercise's status as glyph and word; the glyph keeps
// it readable without colour.
func (x *exercisesLayer) statusLabel(status string) string {
	st, say := x.st, x.say
	switch status {
	case exercisePass:
		return st.OK.Render(say.Text("✓ passed"))
	case exerciseFail:
		return st.Bad.Render(say.Text("✗ failed"))
	case exerciseError:
		return st.Warn.Render(say.Text("! error"))
	case "":
		return st.Faint.Render(say.Text("· not checked"))
	}
	// A status this build does not know: shown as is rather than hidden.
	return st.Warn.Render("? " + status)
}

// checkedAgo says when an exercise was last checked, by the model clock.
func (x *exercisesLayer) checkedAgo(e Exercise) string {
	if e.CheckedAt.IsZero() {
		return ""
	}
	return agoText(x.clock().Sub(e.CheckedAt), x.say)
}

// agoText is a past moment relative to now, in the largest whole unit.
func agoText(d time.Duration, say l10n.Printer) string {
	switch {
	case d < 5*time.Second: // including a CheckedAt a little ahead of this clock
		return say.Text("just now")
	case d < time.Minute:
		return say.Textf("%ds ago", int(d/time.Second))
	case d < time.Hour:
		return say.Textf("%dm ago", int(d/time.Minute))
	case d < 24*time.Hour:
		return say.Textf("%dh ago", int(d/time.Hour))
	}
	return say.Textf("%dd ago", int(d/(24*time.Hour)))
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
func (x *exercisesLayer) Title() string { return x.say.Text("Exercises") }
func (x *exercisesLayer) Hint() string {
	return x.say.Text("your progress, kept up to date by lab check")
}

// View is the layer's lines: the workspace and its progress, one row per
// exercise with the files to edit below it, then how to check.
func (x *exercisesLayer) View() []string {
	st, say, ex, w, h := x.st, x.say, x.ws, x.width, x.height
	if h <= 0 || ex == nil {
		return nil
	}
	var lines []rankedLine
	add := func(rank int, text string) { lines = append(lines, rankedLine{rank, text}) }

	summary := st.Bold.Render(say.Textf("workspace %s", ex.Workspace))
	if ex.Created {
		summary += st.Faint.Render(" · " + say.Textf("created %s", agoText(x.clock().Sub(x.createdAt), say)))
	}
	passed, total := passedCount(ex.Exercises), len(ex.Exercises)
	count := say.Textf("%d/%d passed", passed, total)
	if passed == total && total > 0 {
		count += " · " + say.Text("all done")
	}
	add(rankKeep, summary+st.Faint.Render(" · ")+st.Value.Render(count))
	if ex.Notice != "" {
		add(rankNotice, st.Warn.Render("! "+ex.Notice))
	}
	add(rankSpacing, "")
	if total == 0 {
		add(rankKeep, st.Faint.Render(say.Text("this workspace has no exercises")))
	}
	for _, row := range x.rows(w) {
		add(row.rank, row.text)
	}
	add(rankSpacing, "")
	for _, how := range []struct {
		rank int
		text string
	}{
		{rankHowTo, say.Text("Edit the files, then run lab check in another terminal (or lab check --watch).")},
		{rankHowToMore, say.Text("Stuck? lab hint. This list updates by itself after every check.")},
	} {
		for _, l := range strings.Split(ansi.Wrap(how.text, max(w, 1), ""), "\n") {
			add(how.rank, st.Faint.Render(l))
		}
	}
	return fitRanked(lines, h)
}

// rows are the exercises in aligned columns (next-marker, number,
// title, status, when), each followed by its files.
func (x *exercisesLayer) rows(w int) []rankedLine {
	st, say, exercises := x.st, x.say, x.ws.Exercises
	next := nextExercise(exercises)
	mark := say.Text("next ▸") + " "
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
		files := say.Text("edit") + " " + strings.Join(e.Files, ", ")
		rows = append(rows, rankedLine{rank, strings.Repeat(" ", indent) + st.Faint.Render(files)})
	}
	return rows
}

// noWorkspace is what x says when there is no workspace to show.
func (x *exercisesLayer) noWorkspace() string {
	return x.say.Text("no workspace, so no exercises to show")
}
