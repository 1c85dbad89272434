// Package labtest helps tests that exercise lab as a user meets it: it
// builds the real lab binary once per test process, finds the processes a
// lab process started, drives it in a real terminal (tmux) and tells
// whether a workspace changed; it also creates lab workspaces, solved or
// not, for the tests that build them.
package labtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/mod/modfile"

	"github.com/operator-lab/lab/internal/proc"
	"github.com/operator-lab/lab/internal/tally"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Binary builds lab (the module's main package) once and returns its path.
// The caller's TestMain should call RemoveBinary when done.
func Binary() (string, error) {
	buildOnce.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			buildErr = err
			return
		}
		dir, err := os.MkdirTemp("", "lab-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "lab")
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build lab: %w\n%s", err, out)
		}
		tally.Add(tally.Link, 1)
	})
	return binPath, buildErr
}

// RunBinary runs the lab binary (Binary) with env added to this process's
// environment and returns its stdout, stderr and exit code.
func RunBinary(t testing.TB, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("run lab %v: %v", args, err)
	}
	return out.String(), errOut.String(), code
}

// RemoveBinary deletes the binary Binary built, if any.
func RemoveBinary() {
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
}

// moduleRoot is the directory of lab's go.mod: the nearest above the
// test's working folder (its package's) that declares lab's module. It is
// not found from this file's own path, which -trimpath builds do not keep.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find lab's module: %w", err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modfile.ModulePath(b) == labModule {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("find lab's module: no go.mod of %s above the test's folder", labModule)
		}
		dir = parent
	}
}

// labModule is lab's module path.
const labModule = "github.com/operator-lab/lab"

// Descendants returns the PIDs of every living process below pid.
func Descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid := proc.ParentPID(p); ppid > 0 {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		for _, c := range children[next] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// Alive reports whether pid exists and is not a zombie.
func Alive(pid int) bool { return proc.Running(pid) }

// CommandName returns the executable name of pid ("" if gone). A check
// binary lab runs from a sealed memfd (/proc/<lab>/fd/<n>) is named by the
// memfd's name: "results.test".
func CommandName(pid int) string {
	args := proc.CommandLine(pid)
	if len(args) == 0 {
		return ""
	}
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && strings.HasPrefix(exe, memfdCheckBinary) {
		return strings.TrimSuffix(strings.TrimPrefix(exe, memfdCheckBinary), " (deleted)")
	}
	return filepath.Base(args[0])
}

// memfdCheckBinary starts the target of /proc/<pid>/exe for a check binary
// run from its sealed copy (checker's immutableCopy names it so).
const memfdCheckBinary = "/memfd:lab-check-"
