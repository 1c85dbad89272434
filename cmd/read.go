package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/operator-lab/lab/content"
)

// maxReadWidth keeps lines readable on very wide terminals.
const maxReadWidth = 100

// ReadOptions are the arguments of `lab read` and what it knows about the terminal.
type ReadOptions struct {
	Lesson  string // "3.1", "4.4"; empty lists the lessons
	Section string // a section ID; empty shows the whole lesson
	Lang    string // the --lang flag

	// IsTTY: stdout is a terminal, so render with colour and page the output.
	IsTTY bool
	// Width is the terminal's width in columns (0 when unknown).
	Width int
	// Getenv reads PAGER, LESS, NO_COLOR, GLAMOUR_STYLE, LAB_LANG and the locale.
	Getenv func(string) string
}

func newReadCmd(streams IOStreams) *cobra.Command {
	opts := ReadOptions{Getenv: os.Getenv}
	c := &cobra.Command{
		Use:   "read [LESSON [SECTION]]",
		Short: "Read a lesson (3.1 or 4.4), or one section of it, in the terminal",
		Long: `read shows the text of a lesson: the whole lesson, or one section by its ID.
On a terminal it is rendered with colour and shown in a pager ($PAGER, else
less -R); otherwise it is printed as plain text. Without arguments it lists
the lessons and their sections.

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
			opts.IsTTY, opts.Width = terminalOf(streams.Out)
			return runRead(c.Context(), streams, opts)
		},
	}
	addLangFlag(c, &opts.Lang)
	return c
}

// terminalOf reports whether w is a terminal and, if so, its width.
func terminalOf(w io.Writer) (isTTY bool, width int) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return false, 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return true, 0
	}
	return true, width
}

func runRead(ctx context.Context, streams IOStreams, opts ReadOptions) error {
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

	renderOpts := content.RenderOptions{Width: content.DefaultWidth}
	if opts.IsTTY {
		renderOpts.Width = min(opts.Width, maxReadWidth)
		renderOpts.Style = terminalStyle(getenv)
	}
	text, err := content.Render(markdown, renderOpts)
	if err != nil {
		return err
	}
	if !opts.IsTTY {
		_, err := io.WriteString(streams.Out, text)
		return err
	}
	return page(ctx, streams, text, getenv)
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

// terminalStyle is GLAMOUR_STYLE if set, plain text under NO_COLOR, else
// "dark", or "light" when COLORFGBG says the background is light. glamour's
// own "auto" is avoided on purpose: it asks the terminal for its background
// colour and waits up to 5 s for terminals (and multiplexers) that never answer.
func terminalStyle(getenv func(string) string) string {
	if getenv("NO_COLOR") != "" {
		return "notty"
	}
	if style := getenv("GLAMOUR_STYLE"); style != "" {
		return style
	}
	// COLORFGBG is "foreground;background" (sometimes with a middle field);
	// backgrounds 7 and 15 are white.
	fields := strings.Split(getenv("COLORFGBG"), ";")
	if bg := fields[len(fields)-1]; bg == "7" || bg == "15" {
		return "light"
	}
	return "dark"
}

// page shows text through $PAGER (else less -R). If the pager cannot be
// started the text is printed directly: reading must never fail for want of a pager.
func page(ctx context.Context, streams IOStreams, text string, getenv func(string) string) error {
	pagerCmd := strings.Fields(getenv("PAGER"))
	env := os.Environ()
	if len(pagerCmd) == 0 {
		pagerCmd = []string{"less", "-R"}
		if getenv("LESS") == "" {
			// As git does: quit if it fits on one screen, keep it on screen after quitting.
			env = append(env, "LESS=FRX")
		}
	}
	// Not through proc: the pager must stay in the terminal's foreground
	// process group to read keys. A Ctrl-C reaches it as well as lab, and
	// lab then asks it to quit with SIGTERM, on which less restores the
	// terminal (SIGKILL would leave it in the pager's mode).
	cmd := exec.CommandContext(ctx, pagerCmd[0], pagerCmd[1:]...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.Env = env
	cmd.Stdin = strings.NewReader(text)
	cmd.Stdout = streams.Out
	cmd.Stderr = streams.ErrOut
	if err := cmd.Start(); err != nil {
		_, werr := io.WriteString(streams.Out, text)
		return werr
	}
	if err := cmd.Wait(); err != nil && !errors.Is(ctx.Err(), context.Canceled) {
		return fmt.Errorf("pager %q: %w", strings.Join(pagerCmd, " "), err)
	}
	return nil
}
