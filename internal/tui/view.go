package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// View renders the screen: the header, the open layer's body (the help,
// the reconcile detail, or the dashboard with the lesson or exercises
// below it) and the footer.
func (m Model) View() string {
	if m.layout() == layoutTooSmall {
		return m.viewTooSmall()
	}
	if m.screen == screenStartup {
		return m.startup.View()
	}
	var body string
	switch m.layer {
	case layerHelp:
		body = m.help.View()
	case layerDetail:
		body = m.detail.View()
	default:
		body = m.dash.View()
	}
	return m.viewHeader() + "\n" + body + "\n" + m.viewFooter()
}

func (m Model) viewTooSmall() string {
	msg := m.c.say.Textf("Terminal too small: %d×%d.\nlab needs at least %d×%d;\n80×24 or larger is best.\nEnlarge the window,\nor press q to quit.",
		m.width, m.height, minWidth, minHeight)
	lines := strings.Split(msg, "\n")
	for i := range lines {
		lines[i] = m.c.st.Warn.Render(clip(lines[i], m.width))
	}
	return strings.Join(lines, "\n")
}

// titleWithHint is a frame's title, with its hint when the frame is wide
// enough for both.
func titleWithHint(st Styles, f framed, w int) string {
	title := st.PaneTitle.Render(f.Title())
	if hint := f.Hint(); hint != "" && ansi.StringWidth(title)+ansi.StringWidth(hint)+9 <= w {
		title += st.PaneHint.Render(" · " + hint)
	}
	return title
}

// drawFrame draws lines in a rounded frame w×h with the title in its top
// border; lines are padded or cut to the inside.
func drawFrame(border Ink, title string, lines []string, w, h int) string {
	innerW, innerH := max(w-2, 1), max(h-2, 0)
	title = ansi.Truncate(title, max(w-5, 0), "…")
	fill := max(w-5-ansi.StringWidth(title), 0)
	var b strings.Builder
	b.WriteString(border.Render("╭─") + " " + title + " " + border.Render(strings.Repeat("─", fill)+"╮") + "\n")
	side := border.Render("│")
	for i := 0; i < innerH; i++ {
		line := ""
		if i < len(lines) {
			line = lines[i]
		}
		b.WriteString(side + pad(line, innerW) + side + "\n")
	}
	b.WriteString(border.Render("╰" + strings.Repeat("─", max(w-2, 0)) + "╯"))
	return b.String()
}
