package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/operator-lab/lab/content"
	"github.com/operator-lab/lab/internal/iostreams"
)

// ReadOptions are the arguments of `lab read`. On a terminal (IO's stdout)
// the text is styled for it and paged.
type ReadOptions struct {
	IO      *iostreams.IOStreams
	Lesson  string // "3.1", "4.4"; empty lists the lessons
	Section string // a section ID; empty shows the whole lesson
	Lang    string // the --lang flag

	// Getenv reads GLAMOUR_STYLE, LAB_LANG and the locale.
	Getenv func(string) string
}

// NewCmdRead is `lab read`; runF, if set, runs instead of the real work.
func NewCmdRead(streams *iostreams.IOStreams, runF func(*ReadOptions) error) *cobra.Command {
	opts := &ReadOptions{IO: streams, Getenv: os.Getenv}
	c := &cobra.Command{
		Use:   "read [LESSON [SECTION]]",
		Short: "Read a lesson (3.1 or 4.4), or one section of it, in the terminal",
		Long: `read shows the text of a lesson: the whole lesson, or one section by its ID.
On a terminal it is rendered with colour and shown in a pager ($PAGER, else
less -R); otherwise it is printed as plain text. Prose is wrapped at the
terminal's width ($COLUMNS when not on a terminal, else 80 columns); code
and diagrams are never wrapped. Without arguments it lists the lessons and
their sections.

The language is --lang, else $LAB_LANG, else the locale (ru_* means Russian),
else English. Colours: NO_COLOR turns them off; GLAMOUR_STYLE picks a style
(dark, light, dracula, ...).`,
		Example: "  lab read 3.1\n  lab read 3.1 result\n  lab read 4.4 backoff --lang ru",
		Args:    cobra.MaximumNArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				opts.Lesson = args[0]
			}
			if len(args) > 1 {
				opts.Section = args[1]
			}
			if runF != nil {
				return runF(opts)
			}
			return runRead(c.Context(), opts)
		},
	}
	addLangFlag(c, &opts.Lang)
	return c
}

func runRead(ctx context.Context, opts *ReadOptions) error {
	streams := opts.IO
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	lang, err := content.LangFrom(opts.Lang, getenv)
	if err != nil {
		return err
	}
	markdown, err := readMarkdown(opts.Lesson, opts.Section, lang)
	if err != nil {
		return err
	}

	// Prose wraps at the width the streams say (the terminal's, which the
	// pager shows it on; $COLUMNS in a pipe); code and diagrams never wrap.
	renderOpts := content.RenderOptions{Width: streams.TerminalWidth()}
	if streams.IsStdoutTTY() {
		renderOpts.Style = terminalStyle(streams.TerminalTheme(), getenv)
	}
	text, err := content.Render(markdown, renderOpts)
	if err != nil {
		return err
	}
	// Reading must never fail for want of a pager: without one the text
	// goes straight to the terminal.
	_ = streams.StartPager(ctx)
	_, err = io.WriteString(streams.Out, text)
	return errors.Join(err, streams.StopPager())
}

// readMarkdown picks what to show: the lesson list, a lesson, or a section.
func readMarkdown(lessonID, sectionID, lang string) (string, error) {
	if lessonID == "" {
		return lessonIndex(lang)
	}
	lesson, err := content.Load(lessonID, lang)
	if err != nil {
		return "", err
	}
	if sectionID == "" {
		return lesson.Markdown(), nil
	}
	section, err := lesson.Section(sectionID)
	if err != nil {
		return "", err
	}
	return "# " + lesson.Title + "\n\n" + section.Markdown(), nil
}

// lessonIndex lists every lesson with its section IDs.
func lessonIndex(lang string) (string, error) {
	lessons, err := content.Lessons(lang)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, l := range lessons {
		fmt.Fprintf(&b, "## %s\n\n`lab read %s`\n\n", l.Title, l.ID)
		for _, s := range l.Sections {
			fmt.Fprintf(&b, "- `%s` — %s\n", s.ID, s.Title)
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

// terminalStyle is the glamour style for a terminal of theme (see
// IOStreams.TerminalTheme): plain text without colour, else GLAMOUR_STYLE
// if set, else the theme's ("dark" or "light"). glamour's own "auto" is
// avoided on purpose: it asks the terminal for its background colour and
// waits up to 5 s for terminals (and multiplexers) that never answer.
func terminalStyle(theme string, getenv func(string) string) string {
	if theme == iostreams.ThemeNone {
		return "notty"
	}
	if style := getenv("GLAMOUR_STYLE"); style != "" {
		return style
	}
	return theme
}
