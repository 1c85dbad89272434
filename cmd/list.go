package cmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/operator-lab/lab/internal/iostreams"
	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/workspace"
)

// ListOptions are the arguments of `lab list`.
type ListOptions struct {
	IO  *iostreams.IOStreams
	Dir string
	// Lang is the --lang value, replaced by the language it chooses.
	Lang string
}

// NewCmdList is `lab list`; runF, if set, runs instead of the real work.
func NewCmdList(streams *iostreams.IOStreams, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: streams}
	c := &cobra.Command{
		Use:   "list",
		Short: "List the labs and their exercises, with your progress",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := resolveLang(&opts.Lang); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runList(c.Context(), opts)
		},
	}
	c.Flags().StringVar(&opts.Dir, "dir", "", "workspace folder to show progress from (default: the one you are in, or ./lab-LAB)")
	addLangFlag(c, &opts.Lang)
	return c
}

func runList(_ context.Context, opts *ListOptions) error {
	lang, streams := opts.Lang, opts.IO
	all, err := labs.All()
	if err != nil {
		return err
	}
	// --dir names one workspace: it must be one, and it shows only in its
	// own lab's section.
	var named *workspace.Ref
	if opts.Dir != "" {
		if named, err = workspace.Resolve("", opts.Dir); err != nil {
			return fmt.Errorf("--dir: %w", err)
		}
	}
	workspaceOf := func(lab *labs.Lab) *workspace.Ref {
		if named != nil {
			if named.Lab.ID == lab.ID {
				return named
			}
			return nil
		}
		ref, err := workspace.Resolve(lab.ID, "")
		if err != nil {
			return nil
		}
		return ref
	}
	for i, lab := range all {
		if i > 0 {
			fmt.Fprintln(streams.Out)
		}
		var progress *workspace.Progress
		where := "no workspace yet: lab init " + lab.ID
		if ref := workspaceOf(lab); ref != nil {
			where = displayDir(ref.Dir)
			p, err := workspace.LoadProgress(ref.Dir)
			var corrupt *workspace.CorruptProgressError
			switch {
			case err == nil:
				progress = p
			case errors.As(err, &corrupt):
				fmt.Fprintf(streams.ErrOut, "lab: %v; `lab check` rebuilds it\n", err)
			}
		}
		fmt.Fprintf(streams.Out, "lab %s — %s  (%s)\n", lab.ID, lab.Title.In(lang), where)
		for _, e := range lab.Exercises {
			mark, status := "·", "not checked"
			hints := 0
			if progress != nil {
				if p := progress.Exercises[e.ID]; p != nil {
					hints = p.HintsShown
					switch p.Status {
					case workspace.StatusPass:
						mark, status = "✓", "passed"
					case workspace.StatusFail:
						mark, status = "✗", "failed"
					case workspace.StatusError:
						mark, status = "!", "error"
					}
				}
			}
			line := fmt.Sprintf("  %s %d. %-12s %-28s %s", mark, e.Number, e.ID, e.Title.In(lang), status)
			if hints > 0 {
				line += fmt.Sprintf(", %d/%d hints", hints, len(e.Hints.In(lang)))
			}
			fmt.Fprintln(streams.Out, line)
		}
	}
	return nil
}
