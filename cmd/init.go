package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/operator-lab/lab/content"
	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/workspace"
)

// InitOptions are the arguments of `lab init`.
type InitOptions struct {
	Lab  string
	Dir  string
	Lang string
}

func newInitCmd(streams IOStreams) *cobra.Command {
	var opts InitOptions
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
			return runInit(c.Context(), streams, opts)
		},
	}
	c.Flags().StringVar(&opts.Dir, "dir", "", "workspace folder (default ./lab-LAB)")
	addLangFlag(c, &opts.Lang)
	return c
}

func runInit(_ context.Context, streams IOStreams, opts InitOptions) error {
	lab, err := labs.Get(opts.Lab)
	if err != nil {
		return err
	}
	lang, err := content.Lang(opts.Lang)
	if err != nil {
		return err
	}
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
		fmt.Fprintf(streams.Out, "%s is already the workspace of lab %s; every file is there (nothing changed).\n", shown, lab.ID)
	case len(created.Kept) == 0:
		fmt.Fprintf(streams.Out, "Created %s: lab %s — %s (%d files).\n", shown, lab.ID, lab.Title.In(lang), len(created.Written))
	default:
		fmt.Fprintf(streams.Out, "Restored %d missing files in %s (kept your %d existing ones): %s\n",
			len(created.Written), shown, len(created.Kept), strings.Join(created.Written, ", "))
	}
	fmt.Fprintf(streams.Out, "\nExercises:\n")
	for _, e := range lab.Exercises {
		fmt.Fprintf(streams.Out, "  %d. %-28s %s\n", e.Number, e.Title.In(lang), strings.Join(e.Files, ", "))
	}
	fmt.Fprintf(streams.Out, "\nNext: cd %s, read README.md, edit the TODO(lab) spots, then run `lab check`.\n", shown)
	return nil
}

// displayDir shows a folder relative to the current one when that is shorter.
func displayDir(dir string) string {
	wd, err := os.Getwd()
	if err != nil {
		return dir
	}
	if rel, err := filepath.Rel(wd, dir); err == nil && !strings.HasPrefix(rel, "..") {
		if rel == "." {
			return "."
		}
		return "./" + rel
	}
	return dir
}

// workspaceRef is a lab and the workspace folder a command works on.
type workspaceRef struct {
	Lab *labs.Lab
	Dir string
}

// resolveWorkspace finds the workspace a command is about, from an optional
// lab id and an optional --dir: --dir wins; else the workspace containing
// the current folder; else ./lab-LAB; else the only ./lab-* workspace here.
func resolveWorkspace(labID, dir string) (*workspaceRef, error) {
	var lab *labs.Lab
	if labID != "" {
		l, err := labs.Get(labID)
		if err != nil {
			return nil, err
		}
		lab = l
	}
	pick := func(d string) (*workspaceRef, error) {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		id, err := workspace.Detect(abs)
		if err != nil {
			return nil, err
		}
		if lab != nil && id != lab.ID {
			return nil, fmt.Errorf("%s is a workspace of lab %s, not %s", d, id, lab.ID)
		}
		l, err := labs.Get(id)
		if err != nil {
			return nil, err
		}
		return &workspaceRef{Lab: l, Dir: abs}, nil
	}
	if dir != "" {
		return pick(dir)
	}
	if found := enclosingWorkspace(); found != "" {
		if ref, err := pick(found); err == nil || lab == nil {
			return ref, err
		}
	}
	if lab != nil {
		d := workspace.DefaultDir(lab.ID)
		if _, err := os.Stat(d); err != nil {
			return nil, fmt.Errorf("no workspace for lab %s here (looked for %s): create it with `lab init %s`", lab.ID, d, lab.ID)
		}
		return pick(d)
	}
	all, err := labs.All()
	if err != nil {
		return nil, err
	}
	var found []*workspaceRef
	for _, l := range all {
		if ref, err := pick(workspace.DefaultDir(l.ID)); err == nil {
			found = append(found, ref)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, errors.New("not in a lab workspace: run `lab init 3.1` to create one, or name it with LAB or --dir")
	default:
		return nil, errors.New("several lab workspaces here: say which with LAB or --dir")
	}
}

// enclosingWorkspace returns the nearest lab workspace from the current
// folder up (see workspace.Enclosing), or "".
func enclosingWorkspace() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	return workspace.Enclosing(dir)
}

// splitLabAndExercise reads "[LAB] [EXERCISE]" arguments: a first argument
// that names a lab is the lab.
func splitLabAndExercise(args []string) (labID, exercise string, err error) {
	switch len(args) {
	case 0:
		return "", "", nil
	case 1:
		if _, err := labs.Get(args[0]); err == nil {
			return args[0], "", nil
		}
		return "", args[0], nil
	case 2:
		return args[0], args[1], nil
	default:
		return "", "", fmt.Errorf("expected at most LAB and EXERCISE, got %d arguments", len(args))
	}
}
