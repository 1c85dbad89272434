package tui

import (
	"errors"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	glamourstyles "github.com/charmbracelet/glamour/styles"
	"github.com/charmbracelet/x/ansi"

	"github.com/operator-lab/lab/content"
	"github.com/operator-lab/lab/internal/l10n"
)

// maxLessonWidth keeps lines of prose readable in a wide terminal; tables
// and code may use the whole pane.
const maxLessonWidth = 100

// lessonPane is the lab's lesson beside the live operator: one section at
// a time, scrolled with a viewport. Rendering a section (glamour) takes tens
// of milliseconds, so it happens in the background, one render at a time,
// and the result is kept per section and width; the next section is
// rendered ahead so reading on does not wait.
//
// It is a component of the root model: the root gives it its size once
// per resize (SetSize), routes it the keys it takes while open (Update) and
// draws its lines (View) in the layer's frame. The model holds a pointer
// to it and changes it only in Update.
type lessonPane struct {
	lab    string // the running lab's, so a demo of another lab is told apart
	lang   string
	say    l10n.Printer // the pane's own text, in the lesson's language
	lesson *content.Lesson
	err    error // why there is no lesson
	st     Styles
	replay bool // demos cannot run in a replay
	// demos tells the pane of the demo under way (the live controls); nil
	// until the root sets it.
	demos demoTeller
	keys  lessonKeys
	open  bool // shown, so its keys apply

	width, height int // inside the frame: the text and the demo line

	section int
	view    viewport.Model // scroll position over lines
	lines   []string
	shown   renderKey // what lines hold; section -1 = nothing yet

	rendered  map[renderKey]renderedSection
	rendering bool // a render is in flight
	style     string
}

// demoTeller says which section's demo is under way ("" for none) and a
// line about it.
type demoTeller interface {
	runningDemo() (section, note string)
}

// renderKey names one rendering of a section: for a pane width wide inside.
type renderKey struct{ section, width int }

type renderedSection struct {
	text string
	err  error
}

// lessonRenderedMsg carries a finished render back into the model.
type lessonRenderedMsg struct {
	key renderKey
	renderedSection
}

// lessonKeys open and read the lesson: L toggles it, the rest apply
// while it is open.
type lessonKeys struct {
	Toggle                   key.Binding
	PrevSection, NextSection key.Binding
	ScrollUp, ScrollDown     key.Binding
	PageUp, PageDown         key.Binding
	// Demo shows the current section's demo on the running operator; the
	// root runs it, since it acts through the controls.
	Demo key.Binding
}

func newLessonKeys(say l10n.Printer) lessonKeys {
	return lessonKeys{
		Toggle:      bind([]string{"L"}, "L", say.Text("lesson")),
		PrevSection: bind([]string{"<", ","}, "<", say.Text("prev section")),
		NextSection: bind([]string{">", "."}, ">", say.Text("next section")),
		ScrollUp:    bind([]string{"up", "k"}, "↑/k", say.Text("scroll up")),
		ScrollDown:  bind([]string{"down", "j"}, "↓/j", say.Text("scroll down")),
		PageUp:      bind([]string{"pgup"}, "pgup", say.Text("page up")),
		PageDown:    bind([]string{"pgdown"}, "pgdn", say.Text("page down")),
		Demo:        bind([]string{"w"}, "w", say.Text("see this")),
	}
}

// configure enables the keys for a pane open or closed: L where the lab
// has a lesson, the reading keys while it is open, and w where the
// section shown has a demo this (live) lab can run.
func (p *lessonPane) configure(open bool) {
	p.open = open
	k := &p.keys
	k.Toggle.SetEnabled(p.offered())
	for _, b := range []*key.Binding{&k.PrevSection, &k.NextSection, &k.ScrollUp, &k.ScrollDown, &k.PageUp, &k.PageDown} {
		b.SetEnabled(open)
	}
	s, _ := p.current()
	k.Demo.SetEnabled(open && !p.replay && s.Demo != nil && s.Demo.Lab == p.lab)
	if open {
		k.Toggle.SetHelp("L", p.say.Text("close lesson"))
	} else {
		k.Toggle.SetHelp("L", p.say.Text("lesson"))
	}
}

// ShortHelp leads the footer while the pane is open; pairs of keys read
// better as one entry in a single line.
func (p *lessonPane) ShortHelp() []key.Binding {
	k := p.keys
	if p.showsRunningDemo() {
		k.Demo = helpOnly(k.Demo, "w", p.say.Text("stop demo"))
	}
	return []key.Binding{k.Demo, helpOnly(k.NextSection, "< >", p.say.Text("sections")), helpOnly(k.ScrollDown, "↑/↓", p.say.Text("scroll")), k.Toggle}
}

// FullHelp is the lesson's column of the ? overlay.
func (p *lessonPane) FullHelp() [][]key.Binding {
	k := p.keys
	return [][]key.Binding{{k.Toggle, k.Demo, k.PrevSection, k.NextSection, k.ScrollUp, k.ScrollDown, k.PageUp, k.PageDown}}
}

// newLessonPane loads the lesson of a lab in a language ("" chooses with
// content.Lang: LAB_LANG, then the locale). A lab without a lesson, or a
// language that cannot be chosen, leaves the pane with an error to show.
func newLessonPane(lab, lang string, st Styles, replay bool) *lessonPane {
	p := &lessonPane{lab: lab, lang: lang, st: st, replay: replay, style: st.Markdown, shown: renderKey{section: -1},
		rendered: map[renderKey]renderedSection{}}
	chosen, err := content.Lang(lang)
	if err == nil {
		p.lang, p.say = chosen, l10n.For(chosen)
	}
	p.keys = newLessonKeys(p.say)
	switch {
	case lab == "":
		p.err = errors.New(p.say.Text("no lab is known, so there is no lesson to show"))
	case err != nil:
		p.err = err
	default:
		p.lesson, p.err = content.Load(lab, chosen)
	}
	return p
}

// showsRunningDemo reports whether the section shown is the one whose demo
// is under way (w then stops it).
func (p *lessonPane) showsRunningDemo() bool {
	s, ok := p.current()
	if !ok || p.demos == nil {
		return false
	}
	running, _ := p.demos.runningDemo()
	return running != "" && running == s.ID
}

// offered reports whether the lab has a lesson to open: the pane then
// shows it, or why it could not be loaded.
func (p *lessonPane) offered() bool { return p.lab != "" }

// available reports whether there is a lesson to read.
func (p *lessonPane) available() bool { return p.lesson != nil && len(p.lesson.Sections) > 0 }

// current is the section being read.
func (p *lessonPane) current() (content.Section, bool) {
	if !p.available() {
		return content.Section{}, false
	}
	return p.lesson.Sections[p.section], true
}

// move goes to another section (dir -1 or +1), staying within the lesson.
func (p *lessonPane) move(dir int) bool {
	if !p.available() {
		return false
	}
	next := min(max(p.section+dir, 0), len(p.lesson.Sections)-1)
	changed := next != p.section
	p.section = next
	return changed
}

// renderWidth is the width a section's prose is wrapped at in a pane this wide.
func renderWidth(innerW int) int { return max(min(innerW-1, maxLessonWidth), 20) }

// renderOptions are how a section is rendered in a pane innerW wide:
// prose at renderWidth, tables across the whole pane (so that their cells
// need not break identifiers); code is never wrapped (a line wider than
// the pane is cut, with "…"). Without colour, inline code keeps its
// backticks and code blocks get a bar down their left, so that code does
// not pass for prose.
func (p *lessonPane) renderOptions(innerW int) content.RenderOptions {
	return content.RenderOptions{Width: renderWidth(innerW), TableWidth: max(innerW-1, renderWidth(innerW)),
		Style: p.style, CodeBar: p.style == glamourstyles.NoTTYStyle}
}

// SetSize gives the pane the cells inside its frame; the last row is the
// demo line, the viewport scrolls over the rest. It renders nothing: the
// root calls refresh when the pane is open.
func (p *lessonPane) SetSize(w, h int) {
	p.width, p.height = w, h
	p.view.Width, p.view.Height = w, max(h-1, 1)
}

// refresh shows the current section rendered for the pane's width; it
// returns the command that renders what is missing (the current section
// first, then the next one).
func (p *lessonPane) refresh() tea.Cmd {
	if !p.available() {
		return nil
	}
	want := renderKey{section: p.section, width: p.width}
	if r, ok := p.rendered[want]; ok && p.shown != want {
		sameSection := p.shown.section == want.section
		p.lines = textLines(r.text)
		p.view.SetContent(strings.Join(p.lines, "\n"))
		p.shown = want
		if !sameSection {
			p.view.GotoTop()
		}
	}
	if _, ok := p.rendered[want]; !ok {
		return p.render(want)
	}
	ahead := renderKey{section: want.section + 1, width: want.width}
	if _, ok := p.rendered[ahead]; !ok && ahead.section < len(p.lesson.Sections) {
		return p.render(ahead)
	}
	return nil
}

// Update takes the keys that read the open lesson: sections and scrolling.
// handled is false for every other message, which the root handles.
func (p *lessonPane) Update(msg tea.Msg) (cmd tea.Cmd, handled bool) {
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		return nil, false
	}
	switch k := p.keys; {
	case key.Matches(km, k.PrevSection, k.NextSection):
		dir := 1
		if key.Matches(km, k.PrevSection) {
			dir = -1
		}
		if p.move(dir) {
			p.configure(p.open) // the demo key follows the section
			cmd = p.refresh()
		}
	case key.Matches(km, k.ScrollUp):
		p.view.ScrollUp(1)
	case key.Matches(km, k.ScrollDown):
		p.view.ScrollDown(1)
	case key.Matches(km, k.PageUp):
		p.view.PageUp()
	case key.Matches(km, k.PageDown):
		p.view.PageDown()
	default:
		return nil, false
	}
	return cmd, true
}

// render starts rendering one section unless a render is already running
// (its result triggers the next sync, which asks again for what is missing).
func (p *lessonPane) render(key renderKey) tea.Cmd {
	if p.rendering {
		return nil
	}
	p.rendering = true
	markdown, opts := lessonMarkdown(p.lesson.Sections[key.section]), p.renderOptions(key.width)
	return func() tea.Msg {
		text, err := content.Render(markdown, opts)
		return lessonRenderedMsg{key: key, renderedSection: renderedSection{text: text, err: err}}
	}
}

// store keeps a finished render; renders for another width are dropped,
// since the pane has been resized since.
func (p *lessonPane) store(msg lessonRenderedMsg) {
	p.rendering = false
	for k := range p.rendered {
		if k.width != msg.key.width {
			delete(p.rendered, k)
		}
	}
	p.rendered[msg.key] = msg.renderedSection
}

// lessonMarkdown is a section as the pane shows it. Its heading is left
// out, since the pane's title names the section; so is its closing "see it
// on the running operator" paragraph, which names the headless `lab run`
// command: the pane has its own line for the live demo, with the key to press.
func lessonMarkdown(s content.Section) string {
	md := strings.TrimPrefix(s.Markdown(), "## "+s.Title+"\n")
	if s.Demo == nil {
		return md
	}
	cmd := "`lab " + strings.Join(s.Demo.RunArgs(), " ") + "`"
	if i := strings.LastIndex(md, "\n▶ "); i >= 0 && strings.Contains(md[i:], cmd) {
		return md[:i] + "\n"
	}
	return md
}

// textLines splits rendered text into lines without the blank ones the
// renderer puts before and after it.
func textLines(text string) []string {
	lines := strings.Split(text, "\n")
	blank := func(s string) bool { return strings.TrimSpace(ansi.Strip(s)) == "" }
	for len(lines) > 0 && blank(lines[0]) {
		lines = lines[1:]
	}
	for len(lines) > 0 && blank(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// Title is the pane's title: lesson, position and section.
func (p *lessonPane) Title() string {
	s, ok := p.current()
	if !ok {
		return p.say.Text("Lesson")
	}
	return fmt.Sprintf("%s %s · %d/%d %s", p.say.Text("Lesson"), p.lesson.ID, p.section+1, len(p.lesson.Sections), s.Title)
}

// Hint says where in the section the view is.
func (p *lessonPane) Hint() string {
	v := p.view
	switch {
	case len(p.lines) <= v.Height:
		return ""
	case v.AtTop():
		return p.say.Text("top ↓")
	case v.AtBottom():
		return p.say.Text("end")
	}
	return fmt.Sprintf("%d%%", int(v.ScrollPercent()*100))
}

// View is the pane's lines: the visible part of the section, then a line
// that offers the section's demo.
func (p *lessonPane) View() []string {
	st, w, h := p.st, p.width, p.height
	if h <= 0 {
		return nil
	}
	if !p.available() {
		msg := p.say.Text("no lesson")
		if p.err != nil {
			msg += ": " + p.err.Error()
		}
		return []string{st.Bad.Render(msg)}
	}
	textH := h - 1
	var lines []string
	want := renderKey{section: p.section, width: w}
	switch r, ok := p.rendered[want]; {
	case ok && r.err != nil:
		lines = []string{st.Bad.Render(r.err.Error())}
	case p.shown.section == p.section:
		// The current render, or one for the old width while the new one is made.
		top := min(max(p.view.YOffset, 0), len(p.lines))
		lines = append(lines, p.lines[top:min(top+textH, len(p.lines))]...)
	default:
		lines = []string{st.Faint.Render(p.say.Text("rendering…"))}
	}
	for len(lines) < textH {
		lines = append(lines, "")
	}
	return append(lines[:textH], p.demoLine())
}

// demoLine offers the current section's demo, or says why there is none.
func (p *lessonPane) demoLine() string {
	st := p.st
	s, _ := p.current()
	switch {
	case s.Demo == nil:
		return st.Faint.Render(p.say.Text("no live demo in this section · < > sections · ↑/↓ scroll"))
	case p.replay:
		return st.Faint.Render("▶ " + p.say.Textf("demos run on a live lab, not in a replay: lab start %s", s.Demo.Lab) + " · " + s.Demo.String())
	case s.Demo.Lab != p.lab:
		return st.Warn.Render("▶ " + otherLabDemo(p.say, s.Demo.Lab))
	case p.showsRunningDemo():
		_, note := p.demos.runningDemo()
		return st.Info.Render("▶ " + note)
	}
	return st.Info.Render("▶ "+p.say.Text("press w to see this")) + st.Faint.Render(" · "+s.Demo.String())
}
