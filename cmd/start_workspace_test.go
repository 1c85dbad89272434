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

// TestExercisesFollowTheProgressFile: what the exercises layer gets is the
// progress file's, sent again when a check (here: a write like the
// checker's) changes it, also one that makes the .lab folder;
// a corrupt file is reported, not rewritten; a deleted workspace is
// reported, and followed again once it is back.
func TestExercisesFollowTheProgressFile(t *testing.T) {
	ws, err := openStartWorkspace(mustLab(t, "4.4"), filepath.Join(t.TempDir(), "ws"), "en")
	if err != nil {
		t.Fatal(err)
	}
	if !ws.Created || ws.describe() != displayDir(ws.Dir)+" (created)" {
		t.Errorf("a new workspace: created %v, described as %q", ws.Created, ws.describe())
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
	sent := ws.watchProgress(ctx, "en")
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
			case m, open := <-sent:
				if !open {
					t.Fatalf("the updates ended: %s", what)
				}
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
// controller from it, and prints its reconciles of the sample HelloWorld;
// the workspace is byte-identical afterwards.
func TestStartMineRunsTheLearnersController(t *testing.T) {
	t.Parallel() // waits on its own control plane; the serial tests (env, process checks) run first
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "lab-3.1")
	t.Cleanup(func() { _ = checker.RemoveBuildFiles(dir) })
	runCtx, interrupt := context.WithCancel(ctx)
	ios, out, errOut := syncStreams()
	done := make(chan int, 1)
	go func() { done <- Execute(runCtx, ios, []string{"start", "3.1", "--mine", "--dir", dir}) }()
	var before labtest.Snapshot
	for !strings.Contains(out.String(), "reconcile.end") || !strings.Contains(out.String(), "hello") {
		select {
		case code := <-done:
			t.Fatalf("lab start --mine ended early: exit %d\nstderr:\n%s", code, errOut.String())
		case <-ctx.Done():
			t.Fatalf("no reconcile of the sample HelloWorld:\nstdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
		case <-time.After(100 * time.Millisecond):
		}
		if before == nil && strings.Contains(errOut.String(), "lab start: workspace") {
			before = labtest.TakeSnapshot(t, dir)
		}
	}
	interrupt()
	if code := <-done; code != 0 {
		t.Fatalf("lab start --mine: exit %d\nstderr:\n%s", code, errOut.String())
	}
	stderr := errOut.String()
	for _, want := range []string{"workspace " + dir + " (created)", stepBuildMine, "your controller (results/)", "created "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(out.String(), "HelloWorld") {
		t.Errorf("the stream never names a HelloWorld:\n%s", out.String())
	}
	if len(before) == 0 {
		t.Fatal("the workspace was never seen before the controller ran")
	}
	if changes := before.Changes(labtest.TakeSnapshot(t, dir)); len(changes) > 0 {
		t.Errorf("lab start --mine changed the workspace: %v", changes)
	}
}
