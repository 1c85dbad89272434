package cmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/internal/iostreams"
	"github.com/operator-lab/lab/labs/workspace"
)

// CleanOptions are the arguments of `lab clean`.
type CleanOptions struct {
	IO  *iostreams.IOStreams
	Lab string
	Dir string
	// All removes the build files of every workspace, not just one.
	All bool
}

// NewCmdClean is `lab clean`; runF, if set, runs instead of the real work.
func NewCmdClean(streams *iostreams.IOStreams, runF func(*CleanOptions) error) *cobra.Command {
	opts := &CleanOptions{IO: streams}
	c := &cobra.Command{
		Use:   "clean [LAB]",
		Short: "Delete the build files lab keeps to make checks fast (your workspace is not touched)",
		Long: `clean deletes what ` + "`lab check`" + ` and ` + "`lab start --mine`" + ` keep of a workspace
between runs: a private copy of it and the compiled test binaries (a few
hundred MB), under ` + checker.CacheRoot() + `.
The next check rebuilds them, so it is slower once. Your workspace, its
progress and the control-plane binaries are never touched.`,
		Example: "  lab clean\n  lab clean 4.4 --dir ~/work/lab-4.4\n  lab clean --all",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Lab = args[0]
			}
			if opts.All && (opts.Lab != "" || opts.Dir != "") {
				return errors.New("--all cleans every workspace: leave out LAB and --dir")
			}
			if err := checkLabArg(opts.Lab); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runClean(c.Context(), opts)
		},
	}
	addWorkspaceFlag(c, &opts.Dir)
	c.Flags().BoolVar(&opts.All, "all", false, "delete the build files of every workspace")
	return c
}

func runClean(_ context.Context, opts *CleanOptions) error {
	var (
		paths  []string
		what   string
		remove func() error
	)
	if opts.All {
		paths, what, remove = []string{checker.CacheRoot()}, "every workspace", checker.RemoveAllBuildFiles
	} else {
		ref, err := workspace.Resolve(opts.Lab, opts.Dir)
		if err != nil {
			return err
		}
		if paths, err = checker.BuildFiles(ref.Dir); err != nil {
			return err
		}
		what, remove = "the workspace "+ref.Dir, func() error { return checker.RemoveBuildFiles(ref.Dir) }
	}
	var freed int64
	for _, p := range paths {
		size, err := diskUsage(p)
		if err != nil {
			return err
		}
		freed += size
	}
	if err := remove(); err != nil {
		return err
	}
	if freed == 0 {
		fmt.Fprintf(opts.IO.Out, "No build files to delete for %s.\n", what)
		return nil
	}
	fmt.Fprintf(opts.IO.Out, "Deleted the build files of %s: %s freed. The next check rebuilds them.\n", what, humanBytes(freed))
	return nil
}

// diskUsage is the size of the files under p (0 if p does not exist).
func diskUsage(p string) (int64, error) {
	var total int64
	err := filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if info, err := d.Info(); err == nil && info.Mode().IsRegular() {
			total += info.Size()
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("measure build files: %w", err)
	}
	return total, nil
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
