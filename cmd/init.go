package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/operator-lab/lab/internal/iostreams"
	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/workspace"
)

// InitOptions are the arguments of `lab init`.
type InitOptions struct {
	IO  *iostreams.IOStreams
	Lab string
	Dir string
	// Lang is the --lang value, replaced by the language it chooses.
	Lang string
}

// NewCmdInit is `lab init`; runF, if set, runs instead of the real work.
func NewCmdInit(streams *iostreams.IOStreams, runF func(*InitOptions) error) *cobra.Command {
	opts := &InitOptions{IO: streams}
	c := &cobra.Command{
		Use:   "init LAB",
		Short: "Create a lab's workspace: a Go module with the starter code of every exercise",
		Long: `init creates the workspace for a lab (default ./lab-LAB): a standalone Go
module pinned to the module versions lab itself uses (so it builds offline
from the local module cache), the starter files with TODO(lab) markers, and
a README with the exercises. It starts nothing and never overwrites a file:
run it again to restore files you deleted. A folder that is neither empty
nor a lab workspace is left alone.`,
		Example: "  lab init 3.1\n  lab init 3.1 --dir ~/work/controller-lab --lang ru",
		Args:    cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Lab = args[0]
			if err := checkLabArg(opts.Lab); err != nil {
				return err
			}
			if err := resolveLang(&opts.Lang); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runInit(c.Context(), opts)
		},
	}
	c.Flags().StringVar(&opts.Dir, "dir", "", "workspace folder (default ./lab-LAB)")
	addLangFlag(c, &opts.Lang)
	return c
}

func runInit(_ context.Context, opts *InitOptions) error {
	lab, err := labs.Get(opts.Lab)
	if err != nil {
		return err
	}
	lang, out := opts.Lang, opts.IO.Out
	dir := opts.Dir
	if dir == "" {
		dir = workspace.DefaultDir(lab.ID)
	}
	created, err := workspace.Create(lab, dir, lang)
	if err != nil {
		return err
	}
	shown := displayDir(created.Dir)
	switch {
	case len(created.Written) == 0:
		fmt.Fprintf(out, "%s is already the workspace of lab %s; every file is there (nothing changed).\n", shown, lab.ID)
	case len(created.Kept) == 0:
		fmt.Fprintf(out, "Created %s: lab %s — %s (%d files).\n", shown, lab.ID, lab.Title.In(lang), len(created.Written))
	default:
		fmt.Fprintf(out, "Restored %d missing files in %s (kept your %d existing ones): %s\n",
			len(created.Written), shown, len(created.Kept), strings.Join(created.Written, ", "))
	}
	fmt.Fprintf(out, "\nExercises:\n")
	for _, e := range lab.Exercises {
		fmt.Fprintf(out, "  %d. %-28s %s\n", e.Number, e.Title.In(lang), strings.Join(e.Files, ", "))
	}
	fmt.Fprintf(out, "\nNext: cd %s, read README.md, edit the TODO(lab) spots, then run `lab check`.\n", shown)
	if buildChecksDetached(lab, created.Dir) {
		fmt.Fprintln(out, "(lab is building the checks in the background now, so your first `lab check` is quick.)")
	}
	return nil
}
