package content

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/glamour/styles"
	"github.com/muesli/termenv"
)

// DefaultWidth is the wrap width when the caller does not know the terminal's.
const DefaultWidth = 80

// RenderOptions control how markdown becomes terminal text.
type RenderOptions struct {
	// Width wraps text at this many columns; 0 means DefaultWidth.
	Width int
	// Style is a glamour style name ("dark", "light", "dracula", "auto", ...).
	// Empty or "notty" renders plain text: no colours, no ANSI escapes, for
	// pipes, files and NO_COLOR.
	Style string
}

// Render renders lesson markdown for a terminal.
func Render(markdown string, opts RenderOptions) (string, error) {
	width := opts.Width
	if width <= 0 {
		width = DefaultWidth
	}
	options := []glamour.TermRendererOption{glamour.WithWordWrap(width)}
	plain := opts.Style == "" || opts.Style == styles.NoTTYStyle
	if plain {
		options = append(options,
			glamour.WithStandardStyle(styles.NoTTYStyle),
			glamour.WithColorProfile(termenv.Ascii))
	} else {
		options = append(options, glamour.WithStandardStyle(opts.Style))
	}
	renderer, err := glamour.NewTermRenderer(options...)
	if err != nil {
		return "", fmt.Errorf("markdown renderer (style %q): %w", opts.Style, err)
	}
	out, err := renderer.Render(protectHyphens(markdown))
	if err != nil {
		return "", fmt.Errorf("render markdown: %w", err)
	}
	out = strings.ReplaceAll(out, nonBreakingHyphen, "-")
	if plain {
		// glamour pads every line to the full width; in a file or a pipe
		// that is only noise.
		lines := strings.Split(out, "\n")
		for i, line := range lines {
			lines[i] = strings.TrimRight(line, " ")
		}
		out = strings.Join(lines, "\n")
	}
	return out, nil
}

const nonBreakingHyphen = "\u2011"

// hyphenInWord matches a hyphen between two letters or digits.
var hyphenInWord = regexp.MustCompile(`([\p{L}\p{N}])-([\p{L}\p{N}])`)

// protectHyphens works around a word-wrap bug in glamour's wrapper
// (muesli/reflow v0.3.0): a hyphen inside a word is a break point but is not
// counted in the line's length, so lines with hyphenated words overflow and
// get broken again mid-sentence. Outside code blocks, such hyphens become
// non-breaking hyphens for the renderer and are turned back afterwards.
func protectHyphens(markdown string) string {
	lines := strings.Split(markdown, "\n")
	inFence := false
	for i, line := range lines {
		if isFence(line) {
			inFence = !inFence
			continue
		}
		if !inFence {
			// Twice, so that overlapping matches ("a-b-c") are all replaced.
			line = hyphenInWord.ReplaceAllString(line, "${1}"+nonBreakingHyphen+"${2}")
			lines[i] = hyphenInWord.ReplaceAllString(line, "${1}"+nonBreakingHyphen+"${2}")
		}
	}
	return strings.Join(lines, "\n")
}
