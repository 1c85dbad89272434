// Package mine builds the learner's own controller for `lab start --mine`:
// the lab's runner program (labs.Runner), a main package that starts their
// reconciler with the observation layer and labs/runkit, compiled in a
// private copy of their workspace (checker.NewBuild, the copy a check
// makes), so the workspace itself is never written. internal/learnerctl
// runs the program Build returns.
package mine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/internal/proc"
	"github.com/operator-lab/lab/internal/tally"
	"github.com/operator-lab/lab/labs"
)

// runnerPackage is where the runner's main package goes in the private
// build: a folder no lab exercise uses, with an underscore so `./...` in the
// build folder does not match it.
const runnerPackage = "_labrunner"

// CompileError says the learner's code does not build; Message is the go
// compiler's output with positions in the learner's own files.
type CompileError struct {
	First   string // the first error, "results/reconciler.go:41:2: undefined: x"
	Message string
}

func (e *CompileError) Error() string {
	return "your code does not compile: " + e.First
}

// Build compiles the lab's runner program against the learner's workspace
// and returns the path of the program. The build folders are stable per
// workspace, so a build of unchanged code only relinks at most.
func Build(ctx context.Context, lab *labs.Lab, workspaceDir string) (string, error) {
	if lab.Runner == nil {
		return "", fmt.Errorf("lab %s has no runner for --mine", lab.ID)
	}
	// The runner runs the learner's code with lab's rights, beside the
	// workspace and its progress: the checks' policy applies to it as well.
	if err := checker.Vet(lab, workspaceDir); err != nil {
		return "", err
	}
	program := checker.File{Path: runnerPackage + "/main.go", Read: lab.RunnerProgram}
	build, err := checker.NewBuild(ctx, lab, workspaceDir, checker.ForRunner, []checker.File{program}, nil)
	if err != nil {
		return "", err
	}
	defer build.Close()
	bin := filepath.Join(build.BinDir, "lab-runner")
	cmd := proc.Command(ctx, "go", "build", checker.TrimPath, "-o", bin, "./"+runnerPackage)
	cmd.Dir = build.Dir
	cmd.Env = checker.GoEnv("", nil)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	tally.Add(tally.Link, 1)
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return "", fmt.Errorf("build your controller: %w", context.Cause(ctx))
	case errors.As(err, &exit):
		text := build.LearnerPositions(out.String())
		return "", &CompileError{First: checker.FirstCompileError(text), Message: strings.TrimSpace(text)}
	case err != nil:
		return "", fmt.Errorf("build your controller (is go on PATH?): %w", err)
	}
	return bin, nil
}
