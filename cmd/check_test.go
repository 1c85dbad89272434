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

func TestWatchChecksAgainOnSave(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes := make(chan struct{}, 10)
	ready := make(chan struct{})
	done := make(chan error, 1)
	var log strings.Builder
	go func() {
		done <- watchWorkspace(ctx, &syncWriter{w: &log, ready: ready}, dir, func() { changes <- struct{}{} })
	}()
	<-ready // watching
	// A save of a non-Go file is ignored; a Go file in a subfolder counts,
	// and so does one in a folder created after the watch began: whether
	// the file is written before or after the watcher adds the folder, the
	// check comes only once the folder is watched, so the second save there
	// is seen by the folder's own watch.
	for _, name := range []string{"notes.txt", "pkg/a.go", "newpkg/b.go", "newpkg/b.go"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("package x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if name == "notes.txt" {
			continue
		}
		select {
		case <-changes:
		case <-time.After(10 * time.Second):
			t.Fatalf("no check after saving %s", name)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(changes) != 0 {
		t.Errorf("%d extra checks (a non-Go file, or one save checked twice)", len(changes))
	}
}

// syncWriter closes ready on the first write (the "watching" line).
type syncWriter struct {
	w     *strings.Builder
	ready chan struct{}
	once  bool
}

func (s *syncWriter) Write(p []byte) (int, error) {
	if !s.once {
		s.once = true
		close(s.ready)
	}
	return s.w.Write(p)
}

// labControlPlane starts a private control plane with the lab's CRDs for
// the test, stopped when it ends.
func labControlPlane(t *testing.T, labID string) *controlplane.ControlPlane {
	t.Helper()
	lab, err := labs.Get(labID)
	if err != nil {
		t.Fatal(err)
	}
	crds, err := checker.CRDs(lab)
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
