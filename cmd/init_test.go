package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/operator-lab/lab/internal/iostreams"
	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/workspace"
)

// labCmd runs one lab command line and returns its output.
func labCmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	code = Execute(ctx, ios, args)
	return out.String(), errOut.String(), code
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := labCmd(t, args...)
	if code != 0 {
		t.Fatalf("lab %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWorkspaceCommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	lab, err := labs.Get("3.1")
	if err != nil {
		t.Fatal(err)
	}
	results, _ := lab.Exercise("results")
	starter, _ := results.Starter("results/reconciler.go")
	solution, _ := results.Solution("results/reconciler.go")
	file := filepath.Join(dir, "results", "reconciler.go")

	out := mustRun(t, "init", "3.1", "--dir", dir, "--lang", "en")
	if !strings.Contains(out, "Choosing the Result") || readFile(t, file) != string(starter) {
		t.Fatalf("init did not create the starter workspace:\n%s", out)
	}
	// A second init changes nothing and says so.
	if out := mustRun(t, "init", "3.1", "--dir", dir); !strings.Contains(out, "nothing changed") {
		t.Errorf("second init: %s", out)
	}

	// Hints come one at a time and are remembered.
	first := mustRun(t, "hint", "results", "--dir", dir, "--lang", "en")
	second := mustRun(t, "hint", "3.1", "results", "--dir", dir, "--lang", "ru")
	if !strings.Contains(first, "hint 1/3") || !strings.Contains(second, "hint 2/3") || !strings.Contains(second, "errors.As") {
		t.Errorf("hints did not advance:\n%s\n%s", first, second)
	}
	if out := mustRun(t, "list", "--dir", dir, "--lang", "en"); !strings.Contains(out, "2/3 hints") || !strings.Contains(out, "not checked") {
		t.Errorf("list does not show progress:\n%s", out)
	}

	// The solution is refused before the exercise passes, shown with --force.
	if _, errOut, code := labCmd(t, "solution", "results", "--dir", dir); code == 0 || !strings.Contains(errOut, "has not passed yet") {
		t.Errorf("solution before passing: exit %d, %s", code, errOut)
	}
	if out := mustRun(t, "solution", "results", "--dir", dir, "--force"); !strings.Contains(out, "reconcile.TerminalError") {
		t.Errorf("solution --force did not print the solution:\n%s", out)
	}

	// The learner edits the file; --apply keeps their version as a backup.
	mine := string(starter) + "\n// my attempt\n"
	if err := os.WriteFile(file, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	out = mustRun(t, "solution", "results", "--dir", dir, "--force", "--apply")
	if readFile(t, file) != string(solution) {
		t.Errorf("--apply did not write the solution")
	}
	backups, _ := filepath.Glob(filepath.Join(dir, ".lab", "backups", "*-solution-results", "results", "reconciler.go"))
	if len(backups) != 1 || readFile(t, backups[0]) != mine || !strings.Contains(out, "your previous files are in") {
		t.Errorf("--apply kept no backup of the learner's file (%v):\n%s", backups, out)
	}

	// reset brings the starter back, again with a backup.
	out = mustRun(t, "reset", "results", "--dir", dir)
	if readFile(t, file) != string(starter) || !strings.Contains(out, "reset results/reconciler.go") {
		t.Errorf("reset did not restore the starter:\n%s", out)
	}
	if out := mustRun(t, "reset", "results", "--dir", dir); !strings.Contains(out, "nothing to reset") {
		t.Errorf("a second reset: %s", out)
	}

	// A corrupt progress file is reported, not fatal.
	if err := os.WriteFile(workspace.ProgressPath(dir), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := labCmd(t, "list", "--dir", dir)
	if code != 0 || !strings.Contains(errOut, "corrupt") {
		t.Errorf("list with a corrupt progress file: exit %d, %s", code, errOut)
	}
	if _, errOut, code := labCmd(t, "hint", "--dir", dir); code != 0 || !strings.Contains(errOut, "moved it to") {
		t.Errorf("hint with a corrupt progress file: exit %d, %s", code, errOut)
	}
}

func TestCommandsRejectBadInput(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"init", "9.9"}, `no lab "9.9" (labs: 3.1`},
		{[]string{"hint", "--dir", t.TempDir()}, "is not a lab workspace"},
		{[]string{"init", "3.1", "--lang", "de"}, `unsupported language "de"`},
		{[]string{"solution", "--dir", t.TempDir()}, "accepts between 1 and 2 arg(s)"},
	}
	for _, c := range cases {
		_, errOut, code := labCmd(t, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("lab %s: exit %d, stderr %q; want an error containing %q", strings.Join(c.args, " "), code, errOut, c.want)
		}
	}
}
