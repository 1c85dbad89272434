package cmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/operator-lab/lab/internal/iostreams"
	"github.com/operator-lab/lab/labs/workspace"
)

// SolutionOptions are the arguments of `lab solution`.
type SolutionOptions struct {
	IO       *iostreams.IOStreams
	Lab      string
	Exercise string
	Dir      string
	Force    bool
	Apply    bool
}

// NewCmdSolution is `lab solution`; runF, if set, runs instead of the real work.
func NewCmdSolution(streams *iostreams.IOStreams, runF func(*SolutionOptions) error) *cobra.Command {
	opts := &SolutionOptions{IO: streams}
	c := &cobra.Command{
		Use:   "solution [LAB] EXERCISE",
		Short: "Show an exercise's reference solution (once it passes, or with --force)",
		Long: `solution prints the reference solution of an exercise. It does so once the
exercise has passed a check, so you can compare; --force shows it anyway.
--apply writes it into the workspace, keeping a backup of your files.`,
		Example: "  lab solution results\n  lab solution 3.1 manager --force --apply",
		Args:    cobra.RangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			var err error
			if opts.Lab, opts.Exercise, err = splitLabAndExercise(args); err != nil {
				return err
			}
			if opts.Exercise == "" {
				return errors.New("name the exercise: lab solution [LAB] EXERCISE")
			}
			if runF != nil {
				return runF(opts)
			}
			return runSolution(c.Context(), opts)
		},
	}
	addWorkspaceFlag(c, &opts.Dir)
	c.Flags().BoolVar(&opts.Force, "force", false, "show it even though the exercise has not passed")
	c.Flags().BoolVar(&opts.Apply, "apply", false, "write the solution into the workspace (your files are backed up)")
	return c
}

func runSolution(_ context.Context, opts *SolutionOptions) error {
	out := opts.IO.Out
	ref, err := workspace.Resolve(opts.Lab, opts.Dir)
	if err != nil {
		return err
	}
	e, err := ref.Lab.Exercise(opts.Exercise)
	if err != nil {
		return err
	}
	progress, _, err := workspace.LoadOrRebuildProgress(ref.Dir, ref.Lab.ID)
	if err != nil {
		return err
	}
	if p := progress.Exercises[e.ID]; !opts.Force && (p == nil || !p.EverPassed) {
		return fmt.Errorf("exercise %s has not passed yet: `lab check --exercise %s` first, `lab hint %s` for help, or --force to see the solution now",
			e.ID, e.ID, e.ID)
	}
	if !opts.Apply {
		for _, f := range e.Files {
			b, err := e.Solution(f)
			if err != nil {
				return fmt.Errorf("read solution %s: %w", f, err)
			}
			fmt.Fprintf(out, "// ===== %s (reference solution) =====\n%s\n", f, b)
		}
		return nil
	}
	backupDir := workspace.BackupDir(ref.Dir, "solution-"+e.ID)
	backedUp := 0
	for _, f := range e.Files {
		b, err := e.Solution(f)
		if err != nil {
			return fmt.Errorf("read solution %s: %w", f, err)
		}
		backup, err := workspace.Replace(ref.Dir, f, b, backupDir)
		if err != nil {
			return err
		}
		if backup != "" {
			backedUp++
		}
		fmt.Fprintf(out, "wrote the solution to %s\n", f)
	}
	if backedUp > 0 {
		fmt.Fprintf(out, "your previous files are in %s\n", displayDir(backupDir))
	}
	return nil
}
