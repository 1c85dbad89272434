package cmd

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/workspace"
)

// TestCheckCommand grades one starter exercise through the CLI: exit 1,
// results.json and JUnit written, progress recorded, the workspace's files
// untouched.
func TestCheckCommand(t *testing.T) {
	t.Parallel() // waits on its own control plane; the serial tests (env, process checks) run first
	cp := labControlPlane(t, "3.1")

	dir := filepath.Join(t.TempDir(), "ws")
	mustRun(t, "init", "3.1", "--dir", dir)
	t.Cleanup(func() { _ = checker.RemoveBuildFiles(dir) })
	before := readFile(t, filepath.Join(dir, "reads", "reconciler.go"))
	resultsFile := filepath.Join(t.TempDir(), "results.json")
	junitFile := filepath.Join(t.TempDir(), "junit.xml")

	out, errOut, code := labCmd(t, "check", "3.1", "--dir", dir, "--exercise", "reads", "--lang", "en",
		"--results", resultsFile, "--junit", junitFile, "--kubeconfig", cp.KubeconfigPath)
	if code != 1 {
		t.Fatalf("check of a starter: exit %d, want 1\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "✗ 4. Cache vs API reads") || !strings.Contains(out, "hint 1/3") {
		t.Errorf("report lacks the failed exercise and its hint:\n%s", out)
	}
	var rj checker.ExercismResults
	if err := json.Unmarshal([]byte(readFile(t, resultsFile)), &rj); err != nil || rj.Version != 3 || rj.Status != "fail" {
		t.Errorf("results.json = %+v, %v", rj, err)
	}
	if junit := readFile(t, junitFile); !strings.Contains(junit, `<testsuite name="3.1/reads"`) {
		t.Errorf("junit.xml lacks the reads suite:\n%s", junit)
	}
	p, err := workspace.LoadProgress(dir)
	if err != nil || p.Exercises["reads"] == nil || p.Exercises["reads"].Status != workspace.StatusFail {
		t.Errorf("progress after check = %+v, %v", p, err)
	}
	if readFile(t, filepath.Join(dir, "reads", "reconciler.go")) != before {
		t.Error("check changed the learner's file")
	}

	// --json prints only results.json on stdout.
	out, _, code = labCmd(t, "check", "--dir", dir, "--exercise", "4", "--json", "--kubeconfig", cp.KubeconfigPath)
	if err := json.Unmarshal([]byte(out), &rj); code != 1 || err != nil {
		t.Errorf("check --json: exit %d, stdout not results.json (%v):\n%s", code, err, out)
	}
}

// labControlPlane starts a private control plane with the lab's CRDs for
// the test, stopped when it ends.
func labControlPlane(t *testing.T, labID string) *controlplane.ControlPlane {
	t.Helper()
	lab, err := labs.Get(labID)
	if err != nil {
		t.Fatal(err)
	}
	crds, err := lab.CustomResourceDefinitions()
	if err != nil {
		t.Fatal(err)
	}
	cp, err := controlplane.Start(context.Background(), controlplane.Options{CRDs: crds})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	return cp
}
