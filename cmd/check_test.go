package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestCheckWatchRechecksWhatASaveAffects: `lab check --watch` checks the
// whole lab once, then after a save only the exercises the saved file can
// affect, and nothing after a save no check reads.
func TestCheckWatchRechecksWhatASaveAffects(t *testing.T) {
	t.Parallel()
	cp := labControlPlane(t, "3.1")
	dir := filepath.Join(t.TempDir(), "ws")
	mustRun(t, "init", "3.1", "--dir", dir)
	t.Cleanup(func() { _ = checker.RemoveBuildFiles(dir) })
	streams, out, errOut := syncStreams()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runCheck(ctx, &CheckOptions{IO: streams, Lab: "3.1", Dir: dir, Watch: true, Lang: "en", Kubeconfig: cp.KubeconfigPath})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("check --watch ended with %v", err)
		}
	})
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("no %s; stdout:\n%s\nstderr:\n%s", what, out.String(), errOut.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitFor("first report", func() bool { return strings.Contains(errOut.String(), "watching ") })
	if first := out.String(); !strings.Contains(first, "0 of 4 passed") {
		t.Fatalf("the first check is not of the whole lab:\n%s", first)
	}

	appendTo := func(file, text string) {
		t.Helper()
		path := filepath.Join(dir, file)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, text...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reportsBefore := strings.Count(out.String(), " passed in ")
	appendTo("reads/reconciler.go", "\n// a learner's note\n")
	waitFor("second report", func() bool { return strings.Count(out.String(), " passed in ") > reportsBefore })
	second := out.String()[strings.LastIndex(out.String(), "────"):]
	if !strings.Contains(errOut.String(), "checking again what it may affect: reads") ||
		!strings.Contains(second, "Cache vs API reads") || strings.Contains(second, "Reconcile basics") || !strings.Contains(second, "0 of 1 passed") {
		t.Errorf("a save of reads/reconciler.go did not re-check reads alone:\nstderr:\n%s\nreport:\n%s", errOut.String(), second)
	}

	if err := os.MkdirAll(filepath.Join(dir, "scratch"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scratch", "try.go"), []byte("package scratch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor("word that nothing is checked", func() bool {
		return strings.Contains(errOut.String(), "nothing to check again")
	})
}
