package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/operator-lab/lab/internal/iostreams"
	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/workspace"
)

// ResetOptions are the arguments of `lab reset`.
type ResetOptions struct {
	IO       *iostreams.IOStreams
	Lab      string
	Exercise string
	Dir      string
}

// NewCmdReset is `lab reset`; runF, if set, runs instead of the real work.
func NewCmdReset(streams *iostreams.IOStreams, runF func(*ResetOptions) error) *cobra.Command {
	opts := &ResetOptions{IO: streams}
	c := &cobra.Command{
		Use:     "reset [LAB] [EXERCISE]",
		Short:   "Put an exercise's files (or every exercise's) back to the starter code, keeping a backup",
		Example: "  lab reset results\n  lab reset 3.1",
		Args:    cobra.MaximumNArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			var err error
			if opts.Lab, opts.Exercise, err = splitLabAndExercise(args); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runReset(c.Context(), opts)
		},
	}
	addWorkspaceFlag(c, &opts.Dir)
	return c
}

func runReset(_ context.Context, opts *ResetOptions) error {
	out := opts.IO.Out
	ref, err := workspace.Resolve(opts.Lab, opts.Dir)
	if err != nil {
		return err
	}
	exercises := ref.Lab.Exercises
	name := "all"
	if opts.Exercise != "" {
		e, err := ref.Lab.Exercise(opts.Exercise)
		if err != nil {
			return err
		}
		exercises, name = []*labs.Exercise{e}, e.ID
	}
	progress, _, err := workspace.LoadOrRebuildProgress(ref.Dir, ref.Lab.ID)
	if err != nil {
		return err
	}
	backupDir := workspace.BackupDir(ref.Dir, "reset-"+name)
	backedUp := 0
	for _, e := range exercises {
		for _, f := range e.Files {
			b, err := e.Starter(f)
			if err != nil {
				return fmt.Errorf("read starter %s: %w", f, err)
			}
			backup, err := workspace.Replace(ref.Dir, f, b, backupDir)
			if err != nil {
				return err
			}
			if backup != "" {
				backedUp++
				fmt.Fprintf(out, "reset %s\n", f)
			}
		}
		progress.Exercise(e.ID).Status = "" // the starter has not been checked
	}
	if err := workspace.SaveProgress(ref.Dir, progress); err != nil {
		return err
	}
	if backedUp == 0 {
		fmt.Fprintln(out, "nothing to reset: the files are already the starter code")
		return nil
	}
	fmt.Fprintf(out, "your previous files are in %s\n", displayDir(backupDir))
	return nil
}
