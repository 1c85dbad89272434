package content

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/glamour/ansi"
	"github.com/charmbracelet/glamour/styles"
	xansi "github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
)

// DefaultWidth is the wrap width when the caller does not know the terminal's.
const DefaultWidth = 80

// RenderOptions control how markdown becomes terminal text.
type RenderOptions struct {
	// Width wraps prose at this many columns; 0 means DefaultWidth. Code
	// blocks and diagrams are never wrapped: their lines stay whole, however
	// long, for the terminal (or the pane) to show or cut.
	Width int
	// TableWidth, when wider than Width, is the width tables may use: the
	// lesson pane keeps prose narrower than its frame, but a table gets all
	// of it, so that its cells need not break identifiers.
	TableWidth int
	// Style is a glamour style name ("dark", "light", "dracula", "auto", ...).
	// Empty or "notty" renders plain text: no colours, no ANSI escapes, for
	// pipes, files and NO_COLOR; inline code is then `quoted`.
	Style string
	// CodeBar, in plain text, draws a bar down the left of code blocks, so
	// that without colour they still stand apart from the prose (the lesson
	// pane); `lab read` leaves them bare, for code to be copied as it is.
	CodeBar bool
}

// Render renders lesson markdown for a terminal. The markdown is cut into
// prose, code blocks and tables, each rendered at its own width (glamour
// wraps everything in a document at one width, code included) and joined
// with a blank line, as glamour joins blocks.
func Render(markdown string, opts RenderOptions) (string, error) {
	if opts.Width <= 0 {
		opts.Width = DefaultWidth
	}
	plain := opts.Style == "" || opts.Style == styles.NoTTYStyle
	r := &renderer{opts: opts, plain: plain, style: styleFor(opts.Style, plain), cache: map[rendererKey]*glamour.TermRenderer{}}
	blocks := splitBlocks(markdown)
	// Code is rendered wide enough for its longest line and the margins
	// around it: one width for every block, so one renderer.
	codeWidth := opts.Width
	for _, b := range blocks {
		if b.kind == blockCode {
			codeWidth = max(codeWidth, b.widest+codeMargins)
		}
	}
	var parts []string
	for _, b := range blocks {
		lines, err := r.block(b, codeWidth)
		if err != nil {
			return "", err
		}
		if len(lines) > 0 {
			parts = append(parts, strings.Join(lines, "\n"))
		}
	}
	return "\n" + strings.Join(parts, "\n\n") + "\n\n", nil
}

// renderer renders the blocks of one Render call, with a glamour renderer
// for each width (and one for tables) made once.
type renderer struct {
	opts  RenderOptions
	plain bool
	style *ansi.StyleConfig // nil: opts.Style is one glamour resolves itself
	cache map[rendererKey]*glamour.TermRenderer
}

type rendererKey struct {
	width int
	table bool
}

// block renders one block into lines, without the blank lines around it.
func (r *renderer) block(b block, codeWidth int) ([]string, error) {
	width := r.opts.Width
	switch b.kind {
	case blockCode:
		width = codeWidth
	case blockTable:
		width = max(width, r.opts.TableWidth)
	}
	out, err := r.render(b.text, width, b.kind)
	if err != nil {
		return nil, err
	}
	if b.kind == blockTable && !wordsWhole(b.text, out, r.plain) {
		// Too narrow for the words of its cells: the table broke one
		// mid-word (or cut it), so each row becomes a list item instead.
		if out, err = r.render(tableAsList(b.text), r.opts.Width, blockProse); err != nil {
			return nil, err
		}
	}
	lines := trimBlank(strings.Split(out, "\n"))
	for i, line := range lines {
		switch {
		case r.plain:
			// glamour pads every line to the full width; in a file or a
			// pipe that is only noise.
			line = strings.TrimRight(line, " ")
		case b.kind == blockCode:
			// A code block rendered wider than the prose is padded to that
			// width: the padding would make a pane cut its lines.
			line = trimStyledRight(line)
		}
		if r.plain && r.opts.CodeBar && b.kind == blockCode {
			line = codeBar(line)
		}
		lines[i] = line
	}
	return lines, nil
}

// render renders markdown of one kind of block at width.
func (r *renderer) render(markdown string, width, kind int) (string, error) {
	key := rendererKey{width, kind == blockTable}
	tr, ok := r.cache[key]
	if !ok {
		options := []glamour.TermRendererOption{glamour.WithWordWrap(width)}
		switch {
		case r.style != nil && key.table:
			options = append(options, glamour.WithStyles(tableStyle(*r.style)))
		case r.style != nil:
			options = append(options, glamour.WithStyles(*r.style))
		default:
			options = append(options, glamour.WithStandardStyle(r.opts.Style))
		}
		if r.plain {
			options = append(options, glamour.WithColorProfile(termenv.Ascii))
		}
		var err error
		if tr, err = glamour.NewTermRenderer(options...); err != nil {
			return "", fmt.Errorf("markdown renderer (style %q): %w", r.opts.Style, err)
		}
		r.cache[key] = tr
	}
	if kind != blockCode {
		markdown = protectBreaks(markdown)
	}
	out, err := tr.Render(markdown)
	if err != nil {
		return "", fmt.Errorf("render markdown: %w", err)
	}
	return restoreBreaks.Replace(out), nil
}

// codeMargins is the most the styles put around a code block's lines: the
// document's margin on both sides and the block's own, with room to spare.
const codeMargins = 8

// styleFor is the glamour style called name, with inline code that wraps
// as a word: the styles pad code spans with a space on each side, which the
// wrapper takes for a place to break, leaving a lone "(" at a line's end or
// "):" at the next one's start. Plain text quotes code spans instead (the
// ASCII style means to, with a block prefix glamour ignores for spans).
// A name glamour resolves itself ("auto") or does not know gives nil.
func styleFor(name string, plain bool) *ansi.StyleConfig {
	if plain {
		name = styles.NoTTYStyle
	}
	base, ok := styles.DefaultStyles[name]
	if !ok {
		return nil
	}
	style := *base
	code := style.Code.StylePrimitive
	if plain {
		code.Prefix, code.Suffix = "`", "`"
		code.BlockPrefix, code.BlockSuffix = "", ""
	} else {
		code.Prefix = strings.TrimSpace(code.Prefix)
		code.Suffix = strings.TrimSpace(code.Suffix)
	}
	style.Code.StylePrimitive = code
	return &style
}

// tableStyle is style for tables: code spans keep their colour but lose
// their background. The table's wrapper takes a space with a background
// for part of a word, so a code span in a cell would be broken anywhere
// but at its spaces.
func tableStyle(style ansi.StyleConfig) ansi.StyleConfig {
	style.Code.BackgroundColor = nil
	return style
}

// Kinds of block, as splitBlocks cuts markdown.
const (
	blockProse = iota
	blockCode  // a fenced code block: code or a diagram
	blockTable
)

type block struct {
	kind   int
	text   string
	widest int // for code: the longest line, in columns
}

// splitBlocks cuts markdown into prose, fenced code blocks and tables, in
// order. Only blocks that start in the first column are cut out: one
// inside a list item stays part of it.
func splitBlocks(markdown string) []block {
	var (
		out     []block
		current block
		lines   []string
	)
	flush := func() {
		if text := strings.TrimSpace(strings.Join(lines, "\n")); text != "" {
			current.text = text
			out = append(out, current)
		}
		current, lines = block{}, nil
	}
	for _, line := range strings.Split(markdown, "\n") {
		switch {
		case current.kind == blockCode:
			lines = append(lines, line)
			if isFence(line) {
				flush()
			} else {
				current.widest = max(current.widest, xansi.StringWidth(line))
			}
			continue
		case strings.HasPrefix(line, "```"):
			flush()
			current.kind = blockCode
		case strings.HasPrefix(line, "|") && current.kind != blockTable:
			flush()
			current.kind = blockTable
		case !strings.HasPrefix(line, "|") && current.kind == blockTable:
			flush()
		}
		lines = append(lines, line)
	}
	flush()
	return out
}

// tableRows splits a markdown table into its rows of cells, the header
// first, without the line under it.
func tableRows(table string) [][]string {
	var rows [][]string
	for i, line := range strings.Split(table, "\n") {
		if i == 1 {
			continue // | --- | --- |
		}
		line = strings.TrimSpace(line)
		line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
		var cells []string
		start := 0
		for j := 0; j < len(line); j++ {
			if line[j] == '|' && (j == 0 || line[j-1] != '\\') { // "\|" is a | in a cell
				cells = append(cells, strings.TrimSpace(line[start:j]))
				start = j + 1
			}
		}
		rows = append(rows, append(cells, strings.TrimSpace(line[start:])))
	}
	return rows
}

// wordsWhole reports whether every word of a table's cells is whole in
// its rendering: glamour's table (lipgloss) breaks a word that does not fit
// its column anywhere, and cuts a heading short.
func wordsWhole(table, rendered string, plain bool) bool {
	rendered = xansi.Strip(rendered)
	for _, row := range tableRows(table) {
		for _, cell := range row {
			cell = strings.ReplaceAll(cell, "**", "")
			if !plain {
				cell = strings.ReplaceAll(cell, "`", "")
			}
			for _, word := range strings.Fields(cell) {
				if !strings.Contains(word, "\\") && !strings.Contains(rendered, word) {
					return false
				}
			}
		}
	}
	return true
}

// tableAsList writes a table as a list: one item per row, each cell after
// its column's heading.
func tableAsList(table string) string {
	rows := tableRows(table)
	var b strings.Builder
	for _, row := range rows[1:] {
		var parts []string
		for c, cell := range row {
			if c < len(rows[0]) && rows[0][c] != "" {
				cell = "**" + rows[0][c] + ":** " + cell
			}
			parts = append(parts, cell)
		}
		b.WriteString("- " + strings.Join(parts, " · ") + "\n")
	}
	return b.String()
}

// trimBlank drops the blank lines glamour puts before and after a document.
func trimBlank(lines []string) []string {
	blank := func(s string) bool { return strings.TrimSpace(xansi.Strip(s)) == "" }
	for len(lines) > 0 && blank(lines[0]) {
		lines = lines[1:]
	}
	for len(lines) > 0 && blank(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// styledPadding is trailing spaces, each possibly in its own colour codes.
var styledPadding = regexp.MustCompile(`(?:\x1b\[[0-9;]*m| )+$`)

// trimStyledRight drops a styled line's trailing spaces, resetting the
// colours if codes went with them.
func trimStyledRight(line string) string {
	loc := styledPadding.FindStringIndex(line)
	if loc == nil {
		return line
	}
	tail := line[loc[0]:]
	line = line[:loc[0]]
	if strings.Contains(tail, "\x1b") {
		line += "\x1b[0m"
	}
	return line
}

// codeBar puts a bar in the margin of a plain code block's line.
func codeBar(line string) string {
	const margin = "    " // the document's margin and the block's own
	if rest, ok := strings.CutPrefix(line, margin); ok {
		return "  │ " + rest
	}
	return "  │ " + strings.TrimLeft(line, " ")
}

// Stand-ins for the characters the wrapper breaks lines at (glamour wraps
// at " ,.;-+|"), put where a break would tear a word or a code span apart
// and turned back after rendering. None of them occurs in the lessons
// (TestLessonsHaveNoBreakStandIns).
const (
	nonBreakingHyphen = "\u2011"
	dotStandIn        = "\u2024" // one dot leader
	commaStandIn      = "\u201a" // single low-9 quotation mark
	semicolonStandIn  = "\u037e" // Greek question mark
)

// breakStandIns are the characters a stand-in replaces, and restoreBreaks
// turns the stand-ins back.
var (
	breakStandIns = strings.NewReplacer("-", nonBreakingHyphen, ".", dotStandIn, ",", commaStandIn, ";", semicolonStandIn)
	restoreBreaks = strings.NewReplacer(nonBreakingHyphen, "-", dotStandIn, ".", commaStandIn, ",", semicolonStandIn, ";")
)

var (
	// hyphenInWord matches a hyphen between two letters or digits.
	hyphenInWord = regexp.MustCompile(`([\p{L}\p{N}])-([\p{L}\p{N}])`)
	// inlineCode matches inline code on one line.
	inlineCode = regexp.MustCompile("`[^`]+`")
)

// protectBreaks keeps the wrapper from breaking lines inside a word or a
// code span (outside code blocks). Inside code spans, every character it
// breaks at but the space gets a stand-in: glamour would break
// "ctrl.Result" after the dot. Hyphens inside words get one too, working
// around a bug in glamour's wrapper (muesli/reflow v0.3.0): such a hyphen
// is a break point but is not counted in the line's length, so lines with
// hyphenated words overflow and get broken again mid-sentence.
func protectBreaks(markdown string) string {
	lines := strings.Split(markdown, "\n")
	inFence := false
	for i, line := range lines {
		if isFence(line) {
			inFence = !inFence
			continue
		}
		if !inFence {
			line = inlineCode.ReplaceAllStringFunc(line, breakStandIns.Replace)
			// Twice, so that overlapping matches ("a-b-c") are all replaced.
			line = hyphenInWord.ReplaceAllString(line, "${1}"+nonBreakingHyphen+"${2}")
			lines[i] = hyphenInWord.ReplaceAllString(line, "${1}"+nonBreakingHyphen+"${2}")
		}
	}
	return strings.Join(lines, "\n")
}
