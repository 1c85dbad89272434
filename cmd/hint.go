package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/operator-lab/lab/internal/iostreams"
	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/workspace"
)

// HintOptions are the arguments of `lab hint`.
type HintOptions struct {
	IO       *iostreams.IOStreams
	Lab      string
	Exercise string
	Dir      string
	// Lang is the --lang value, replaced by the language it chooses.
	Lang string
}

// NewCmdHint is `lab hint`; runF, if set, runs instead of the real work.
func NewCmdHint(streams *iostreams.IOStreams, runF func(*HintOptions) error) *cobra.Command {
	opts := &HintOptions{IO: streams}
	c := &cobra.Command{
		Use:   "hint [LAB] [EXERCISE]",
		Short: "Show the next hint for an exercise (the first unfinished one by default)",
		Long: `hint shows an exercise's hints one at a time, vaguest first: each call shows
the next one. Without EXERCISE it picks the first exercise that has not passed.`,
		Example: "  lab hint\n  lab hint results\n  lab hint 3.1 2",
		Args:    cobra.MaximumNArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			var err error
			if opts.Lab, opts.Exercise, err = splitLabAndExercise(args); err != nil {
				return err
			}
			if err := resolveLang(&opts.Lang); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runHint(c.Context(), opts)
		},
	}
	addWorkspaceFlag(c, &opts.Dir)
	addLangFlag(c, &opts.Lang)
	return c
}

func runHint(_ context.Context, opts *HintOptions) error {
	ref, err := workspace.Resolve(opts.Lab, opts.Dir)
	if err != nil {
		return err
	}
	lang, streams := opts.Lang, opts.IO
	progress, notice, err := workspace.LoadOrRebuildProgress(ref.Dir, ref.Lab.ID)
	if err != nil {
		return err
	}
	if notice != "" {
		fmt.Fprintf(streams.ErrOut, "lab: %s\n", notice)
	}
	e, err := exerciseOrFirstUnfinished(ref.Lab, opts.Exercise, progress)
	if err != nil {
		return err
	}
	hints := e.Hints.In(lang)
	p := progress.Exercise(e.ID)
	if len(hints) == 0 {
		return fmt.Errorf("exercise %s of lab %s has no hints", e.ID, ref.Lab.ID)
	}
	i := p.NextHint(len(hints))
	fmt.Fprintf(streams.Out, "%s %d. %s — hint %d/%d\n\n%s\n", ref.Lab.ID, e.Number, e.Title.In(lang), i+1, len(hints), hints[i])
	if i == len(hints)-1 {
		fmt.Fprintf(streams.Out, "\nThat is the last hint. `lab solution %s %s --force` shows the reference solution.\n", ref.Lab.ID, e.ID)
	}
	p.ShowHint(i)
	return workspace.SaveProgress(ref.Dir, progress)
}

// exerciseOrFirstUnfinished returns the named exercise, or the first one
// whose last check did not pass.
func exerciseOrFirstUnfinished(lab *labs.Lab, ref string, progress *workspace.Progress) (*labs.Exercise, error) {
	if ref != "" {
		return lab.Exercise(ref)
	}
	for _, e := range lab.Exercises {
		if p := progress.Exercises[e.ID]; p == nil || p.Status != workspace.StatusPass {
			return e, nil
		}
	}
	return nil, fmt.Errorf("every exercise of lab %s passed; name one to see its hints", lab.ID)
}
