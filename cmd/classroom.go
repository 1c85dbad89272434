package cmd

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/operator-lab/lab/internal/buildinfo"
	"github.com/operator-lab/lab/internal/classroom"
	"github.com/operator-lab/lab/internal/iostreams"
	"github.com/operator-lab/lab/labs/workspace"
)

// ClassroomInitOptions are the arguments of `lab classroom init`.
type ClassroomInitOptions struct {
	IO  *iostreams.IOStreams
	Lab string
	Dir string
	CI  string
}

// ciServices are the CI services `lab classroom init --ci` writes for.
var ciServices = []string{"github"}

// NewCmdClassroom is `lab classroom`, the commands for grading a class's
// workspaces in CI; runF, if set, runs instead of the real work of init.
func NewCmdClassroom(streams *iostreams.IOStreams, runF func(*ClassroomInitOptions) error) *cobra.Command {
	c := &cobra.Command{
		Use:   "classroom",
		Short: "Grade a class's workspaces in CI (GitHub Classroom)",
		Args:  cobra.NoArgs,
	}
	opts := &ClassroomInitOptions{IO: streams}
	initCmd := &cobra.Command{
		Use:   "init [LAB]",
		Short: "Add the CI workflow that grades every push of this workspace",
		Long: `classroom init adds to the workspace what grades every push of it in a
class's CI, and reports a score per exercise to GitHub Classroom:

  ` + classroom.WorkflowPath + `  installs lab, provisions the control plane
      (cached between runs), runs lab check --json --junit, and hands each
      exercise's result to GitHub Classroom's grading reporter;
  ` + workspace.ClassroomFile + `  what each exercise is worth (its lab.yaml points to
      begin with). Passing an exercise earns all its points, failing it none;
      lab check's report and JUnit show the same score.

It never overwrites a file: delete one to have it written again. Push both
files with the workspace.`,
		Example: "  lab classroom init\n  lab classroom init 4.4 --dir ~/work/lab-4.4 --ci github",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Lab = args[0]
			}
			if err := checkLabArg(opts.Lab); err != nil {
				return err
			}
			if !slices.Contains(ciServices, opts.CI) {
				return fmt.Errorf("--ci %q: lab writes a workflow for %v", opts.CI, ciServices)
			}
			if runF != nil {
				return runF(opts)
			}
			return runClassroomInit(c.Context(), opts)
		},
	}
	addWorkspaceFlag(initCmd, &opts.Dir)
	initCmd.Flags().StringVar(&opts.CI, "ci", "github", "the CI service to write for")
	c.AddCommand(initCmd)
	return c
}

func runClassroomInit(_ context.Context, opts *ClassroomInitOptions) error {
	ref, err := workspace.Resolve(opts.Lab, opts.Dir)
	if err != nil {
		return err
	}
	// A classroom file already there must be one lab can read: the workflow
	// is no use with points lab check refuses.
	if _, err := workspace.Points(ref.Lab, ref.Dir); err != nil {
		return err
	}
	created, err := workspace.AddMissing(ref.Dir, []workspace.NewFile{
		{Path: workspace.ClassroomFile, Content: func() ([]byte, error) { return workspace.ClassroomYAML(ref.Lab), nil }},
		{Path: classroom.WorkflowPath, Content: func() ([]byte, error) { return classroom.Workflow(ref.Lab, buildinfo.Version), nil }},
	})
	if err != nil {
		return err
	}
	out := opts.IO.Out
	for _, f := range created.Written {
		fmt.Fprintf(out, "wrote %s\n", f)
	}
	for _, f := range created.Kept {
		fmt.Fprintf(out, "kept  %s (it exists; delete it to have lab write it again)\n", f)
	}
	fmt.Fprintf(out, "\nCommit and push both files: every push is then graded in GitHub Actions by\nlab check, with lab installed by `go install %s@%s`.\n", classroom.Module, classroom.InstallVersion(buildinfo.Version))
	return nil
}
