package cmd

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/labs/workspace"
)

// TestCheckValidatesReportPathsBeforeGrading: a --results or --junit file
// that cannot be written is refused at once, before any control plane or
// build, and progress is left alone.
func TestCheckValidatesReportPathsBeforeGrading(t *testing.T) {
	labtest.Hermetic(t)
	dir := newTestWorkspace(t)
	before := readFile(t, workspace.ProgressPath(dir))
	missing := filepath.Join(t.TempDir(), "missing")
	for _, tc := range []struct{ flag, path, want string }{
		{"--junit", filepath.Join(missing, "j.xml"), "the folder " + missing + " does not exist"},
		{"--results", filepath.Join(missing, "r.json"), "the folder " + missing + " does not exist"},
		{"--results", dir, "is a folder, not a file"},
	} {
		start := time.Now()
		// The kubeconfig points nowhere: reaching the checks would fail differently.
		_, errOut, code := labCmd(t, "check", "--dir", dir, "--exercise", "results", tc.flag, tc.path,
			"--kubeconfig", filepath.Join(t.TempDir(), "no-kubeconfig"))
		if code != 1 || !strings.Contains(errOut, "lab: "+tc.flag+": ") || !strings.Contains(errOut, tc.want) {
			t.Errorf("check %s %s: exit %d, %q; want it refused saying %q", tc.flag, tc.path, code, errOut, tc.want)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("check %s %s was refused only after %s (after grading?)", tc.flag, tc.path, took)
		}
	}
	if readFile(t, workspace.ProgressPath(dir)) != before {
		t.Error("a refused check changed progress")
	}
}

// TestCheckSavesProgressWhenAReportCannotBeWritten: a report file that
// fails to be written after grading (a full disk) is an error, but the
// grades are saved all the same.
func TestCheckSavesProgressWhenAReportCannotBeWritten(t *testing.T) {
	labtest.Hermetic(t)
	cp := labControlPlane(t, "3.1")
	dir := newTestWorkspace(t)
	t.Cleanup(func() { _ = checker.RemoveBuildFiles(dir) })

	// /dev/full opens for writing and fails every write: "no space left".
	out, errOut, code := labCmd(t, "check", "--dir", dir, "--exercise", "reads", "--lang", "en",
		"--results", "/dev/full", "--kubeconfig", cp.KubeconfigPath)
	if code != 1 || !strings.Contains(errOut, "no space left on device") {
		t.Errorf("check --results /dev/full: exit %d\n%s%s", code, out, errOut)
	}
	p, err := workspace.LoadProgress(dir)
	if err != nil || p.Exercises["reads"] == nil || p.Exercises["reads"].Status != workspace.StatusFail {
		t.Errorf("progress after the check = %+v, %v; want reads recorded as failed", p, err)
	}
}
