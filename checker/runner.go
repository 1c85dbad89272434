package checker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/operator-lab/lab/internal/proc"
	"github.com/operator-lab/lab/labs"
)

// runnerPurpose names the build folder of `lab start --mine`, beside the
// checks' own, so a check and a start can run at the same time.
const runnerPurpose = "runner"

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

// BuildRunner compiles the lab's runner program against the learner's
// workspace (the same private copy a check makes, never writing into the
// workspace) and returns the path of the program. A build of unchanged
// code only relinks at most, as the folders are stable per workspace.
func BuildRunner(ctx context.Context, lab *labs.Lab, workspaceDir string) (string, error) {
	if lab.Runner == nil {
		return "", fmt.Errorf("lab %s has no runner for --mine", lab.ID)
	}
	buildDir, binDir, unlock, err := lockBuildDirWaiting(ctx, workspaceDir, runnerPurpose, nil)
	if err != nil {
		return "", err
	}
	defer unlock()
	program := addedFile{runnerPackage + "/main.go", lab.RunnerProgram}
	if err := prepare(lab, workspaceDir, buildDir, []addedFile{program}); err != nil {
		return "", err
	}
	bin := filepath.Join(binDir, "lab-runner")
	cmd := proc.Command(ctx, "go", "build", "-o", bin, "./"+runnerPackage)
	cmd.Dir = buildDir
	cmd.Env = testEnv("", nil)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return "", fmt.Errorf("build your controller: %w", context.Cause(ctx))
	case errors.As(err, &exit):
		text := pathMapper{buildDir: buildDir, module: lab.Module}.mapText(out.String())
		return "", &CompileError{First: firstCompileError(text), Message: strings.TrimSpace(text)}
	case err != nil:
		return "", fmt.Errorf("build your controller (is go on PATH?): %w", err)
	}
	return bin, nil
}
