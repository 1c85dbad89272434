package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/internal/tui"
	"github.com/operator-lab/lab/labs/workspace"
)

// TestStartLeavesAnExistingWorkspaceAlone: the first start creates the
// workspace; later ones use it as it is (a file the learner deleted stays
// deleted: restoring is `lab init`'s job), and a workspace of the other lab
// is refused with a way out.
func TestStartLeavesAnExistingWorkspaceAlone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	first, err := openOrCreateWorkspace("3.1", dir, "en")
	if err != nil {
		t.Fatal(err)
	}
	if !first.Created || !strings.HasSuffix(first.describe(), "(created)") {
		t.Errorf("first start: created=%v, described as %q", first.Created, first.describe())
	}
	readme := filepath.Join(dir, "README.md")
	if err := os.Remove(readme); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(dir, "results", "reconciler.go")
	if err := os.WriteFile(mine, []byte("package results // mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	second, err := openOrCreateWorkspace("3.1", dir, "en")
	if err != nil {
		t.Fatal(err)
	}
	if second.Created {
		t.Error("the second start says it created the workspace")
	}
	if _, err := os.Stat(readme); err == nil {
		t.Error("the second start restored README.md, which the learner deleted")
	}
	if b, _ := os.ReadFile(mine); string(b) != "package results // mine\n" {
		t.Errorf("the learner's file changed: %q", b)
	}
	_, err = openOrCreateWorkspace("4.4", dir, "en")
	if err == nil || !strings.Contains(err.Error(), "workspace of lab 3.1, not 4.4") || !strings.Contains(err.Error(), "--dir") {
		t.Errorf("starting 4.4 in a 3.1 workspace: %v", err)
	}
}

// TestStartFindsTheWorkspaceItIsIn: run from inside a workspace (any
// folder of it), lab start uses that workspace rather than making a new
// one inside it; from inside another lab's workspace it refuses.
func TestStartFindsTheWorkspaceItIsIn(t *testing.T) {
	ws, err := openOrCreateWorkspace("3.1", filepath.Join(t.TempDir(), "mine"), "en")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(ws.Dir, "results"))
	found, err := openOrCreateWorkspace("3.1", "", "en")
	if err != nil {
		t.Fatal(err)
	}
	if found.Dir != ws.Dir || found.Created {
		t.Errorf("from inside %s lab start used %s (created=%v)", ws.Dir, found.Dir, found.Created)
	}
	if _, err := os.Stat(filepath.Join(ws.Dir, "results", "lab-3.1")); err == nil {
		t.Error("lab start made a workspace inside the workspace")
	}
	if _, err := openOrCreateWorkspace("4.4", "", "en"); err == nil || !strings.Contains(err.Error(), "inside the workspace of lab 3.1") {
		t.Errorf("lab start 4.4 inside a 3.1 workspace: %v", err)
	}
}

// TestStartLeavesOtherFoldersAlone: a folder that holds something else is
// never filled with lab's files; lab start says how to go on.
func TestStartLeavesOtherFoldersAlone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "project")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := labtest.TakeSnapshot(t, dir)
	_, err := openOrCreateWorkspace("3.1", dir, "en")
	if err == nil || !strings.Contains(err.Error(), "not empty and not a lab workspace") || !strings.Contains(err.Error(), "--dir") {
		t.Errorf("lab start in another project: %v", err)
	}
	if changes := before.Changes(labtest.TakeSnapshot(t, dir)); len(changes) > 0 {
		t.Errorf("lab start wrote into another project: %v", changes)
	}
}

// TestExercisesFollowTheProgressFile: what the exercises layer gets is the
// progress file's, sent again when a check (here: a write like the
// checker's) changes it, also one that makes the .lab folder;
// a corrupt file is reported, not rewritten; a deleted workspace is
// reported, and followed again once it is back.
func TestExercisesFollowTheProgressFile(t *testing.T) {
	ws, err := openOrCreateWorkspace("4.4", filepath.Join(t.TempDir(), "ws"), "en")
	if err != nil {
		t.Fatal(err)
	}
	msg := ws.exercisesMsg("en")
	if len(msg.Exercises) != len(ws.Lab.Exercises) || msg.Exercises[0].Status != "" {
		t.Fatalf("fresh workspace: %+v", msg)
	}
	// Without its .lab folder (deleted, say), the first check makes it.
	if err := os.RemoveAll(filepath.Join(ws.Dir, workspace.StateDir)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pw, err := ws.openProgressWatch()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.close()
	sent := make(chan tui.ExercisesMsg, 16)
	go pw.run(ctx, "en", func(m tui.ExercisesMsg) { sent <- m })
	passed := func(m tui.ExercisesMsg) int {
		n := 0
		for _, e := range m.Exercises {
			if e.Status == workspace.StatusPass {
				n++
			}
		}
		return n
	}
	// await returns the first message sent that satisfies ok.
	await := func(what string, ok func(tui.ExercisesMsg) bool) tui.ExercisesMsg {
		t.Helper()
		for {
			select {
			case m := <-sent:
				if ok(m) {
					return m
				}
			case <-ctx.Done():
				t.Fatalf("no update: %s", what)
			}
		}
	}

	p := workspace.NewProgress("4.4")
	p.Record(ws.Lab.Exercises[1].ID, workspace.StatusPass, time.Now())
	if err := workspace.SaveProgress(ws.Dir, p); err != nil {
		t.Fatal(err)
	}
	if m := await("after one exercise passed", func(m tui.ExercisesMsg) bool { return passed(m) == 1 }); m.Notice != "" {
		t.Errorf("after one exercise passed, the layer got notice %q", m.Notice)
	}

	if err := os.WriteFile(workspace.ProgressPath(ws.Dir), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if m := ws.exercisesMsg("en"); !strings.Contains(m.Notice, "lab check") {
		t.Errorf("a corrupt progress file gave notice %q", m.Notice)
	}
	if b, _ := os.ReadFile(workspace.ProgressPath(ws.Dir)); string(b) != "{not json" {
		t.Error("reading the progress for the view rewrote the file")
	}
	await("after the progress file was corrupted", func(m tui.ExercisesMsg) bool {
		return strings.Contains(m.Notice, "lab check")
	})

	if err := os.RemoveAll(ws.Dir); err != nil {
		t.Fatal(err)
	}
	await("after the workspace was deleted", func(m tui.ExercisesMsg) bool {
		return strings.Contains(m.Notice, "is gone")
	})
	if err := workspace.SaveProgress(ws.Dir, p); err != nil { // makes the folders again
		t.Fatal(err)
	}
	await("after the workspace came back", func(m tui.ExercisesMsg) bool {
		return passed(m) == 1 && m.Notice == ""
	})
}

// TestStartMineRunsTheLearnersController: `lab start 3.1 --mine` without a
// terminal creates the workspace, builds the learner's (starter) results
// controller from it, and prints its reconciles of the sample Greeting;
// the workspace is byte-identical afterwards.
func TestStartMineRunsTheLearnersController(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "lab-3.1")
	t.Cleanup(func() { _ = checker.RemoveBuildFiles(dir) })
	runCtx, interrupt := context.WithCancel(ctx)
	var out, errOut labtest.SyncBuffer
	done := make(chan error, 1)
	go func() {
		done <- runStart(runCtx, IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
			StartOptions{Lab: "3.1", Mine: true, Dir: dir})
	}()
	var before labtest.Snapshot
	for !strings.Contains(out.String(), "reconcile.end") || !strings.Contains(out.String(), "hello") {
		select {
		case err := <-done:
			t.Fatalf("lab start --mine ended early: %v\nstderr:\n%s", err, errOut.String())
		case <-ctx.Done():
			t.Fatalf("no reconcile of the sample Greeting:\nstdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
		case <-time.After(100 * time.Millisecond):
		}
		if before == nil && strings.Contains(errOut.String(), "lab start: workspace") {
			before = labtest.TakeSnapshot(t, dir)
		}
	}
	interrupt()
	if err := <-done; err != nil {
		t.Fatalf("lab start --mine: %v\nstderr:\n%s", err, errOut.String())
	}
	stderr := errOut.String()
	for _, want := range []string{"workspace " + dir + " (created)", stepBuildMine, "your controller (results/)", "created "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(out.String(), "Greeting") {
		t.Errorf("the stream never names a Greeting:\n%s", out.String())
	}
	if len(before) == 0 {
		t.Fatal("the workspace was never seen before the controller ran")
	}
	if changes := before.Changes(labtest.TakeSnapshot(t, dir)); len(changes) > 0 {
		t.Errorf("lab start --mine changed the workspace: %v", changes)
	}
}
