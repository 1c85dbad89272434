package checker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/workspace"
)

// The fixtures in testdata are recorded `go test -json` streams of lab 3.1
// workspaces (the build folder's path replaced by BUILDDIR):
//
//   - gomod-missing-version.jsonl: `go test -c -json ./results ./reads` with
//     go.mod requiring sigs.k8s.io/controller-runtime v0.99.0;
//   - gomod-missing-replacement.jsonl: the same with
//     `replace sigs.k8s.io/controller-runtime => /nonexistent`;
//   - controlplane-gone.jsonl: test2json of the solved results exercise's
//     checks run against a control plane that was stopped;
//   - timeout-loop.jsonl: test2json of the results exercise with `for {}` at
//     the top of Reconcile (testdata/timeout-loop holds that source) and
//     -test.timeout=10s. Go reports a goroutine stopped on the empty loop's
//     jump at line 1 ("reconciler.go:1 +0x1b"), or at the loop's line when
//     stopped one instruction earlier; the fixture holds the line-1 form.

const fixtureModule = "example.com/lab31"

func fixtureLab(t *testing.T) (*labs.Lab, *labs.Exercise) {
	t.Helper()
	lab, err := labs.Get("3.1")
	if err != nil {
		t.Fatal(err)
	}
	e, err := lab.Exercise("results")
	if err != nil {
		t.Fatal(err)
	}
	return lab, e
}

// readFixture parses a recorded stream, with BUILDDIR replaced by buildDir.
func readFixture(t *testing.T, name, buildDir string) map[string]*packageRun {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]*packageRun{}
	if err := parseTestJSON(strings.NewReader(strings.ReplaceAll(string(b), "BUILDDIR", buildDir)), runs); err != nil {
		t.Fatal(err)
	}
	return runs
}

// TestGoModResolutionErrorsSayWhatGoSaid: when go.mod names a module
// version or a replacement that cannot be had, go files its message under
// the dependency's package; the grade quotes it instead of an empty
// "does not compile: ".
func TestGoModResolutionErrorsSayWhatGoSaid(t *testing.T) {
	_, e := fixtureLab(t)
	for fixture, want := range map[string]string{
		"gomod-missing-version.jsonl":     "sigs.k8s.io/controller-runtime@v0.99.0: reading https://proxy.golang.org/sigs.k8s.io/controller-runtime/@v/v0.99.0.zip: 403 Forbidden",
		"gomod-missing-replacement.jsonl": "replacement directory /nonexistent does not exist",
	} {
		t.Run(fixture, func(t *testing.T) {
			runs := readFixture(t, fixture, "/tmp/build")
			explainFailedBuilds(runs)
			res := interpret(e, runs[fixtureModule+"/results"], runs[""], "", nil, pathMapper{buildDir: "/tmp/build", module: fixtureModule})
			if res.Status != StatusError || !strings.HasPrefix(res.Reason, "a module go.mod requires cannot be used: ") || !strings.Contains(res.Reason, want) {
				t.Errorf("grade %s, reason %q; want error quoting %q", res.Status, res.Reason, want)
			}
			if !strings.Contains(res.Output, want) {
				t.Errorf("output lacks go's message:\n%s", res.Output)
			}
			if strings.Contains(res.Output, "reads/reconciler.go") {
				t.Errorf("output holds what go said about another exercise's package:\n%s", res.Output)
			}
		})
	}
}

// TestPrepareRejectsAnotherModulePath: a go.mod whose module line was
// changed is named as the problem, before go fails to find the lab's own
// packages by their import paths.
func TestPrepareRejectsAnotherModulePath(t *testing.T) {
	lab, _ := fixtureLab(t)
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module example.com/mine\n\ngo 1.26.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := prepare(lab, src, t.TempDir(), nil)
	if err == nil || !strings.Contains(err.Error(), "go.mod's module must be "+fixtureModule) || !strings.Contains(err.Error(), "example.com/mine") {
		t.Fatalf("prepare = %v, want it to say go.mod's module must be %s", err, fixtureModule)
	}
}

// TestTimeoutInALoopNamesTheLoopLine: the goroutine dump's frame at line 1
// of the learner's file is mapped to the empty loop's own line, which the
// reason names.
func TestTimeoutInALoopNamesTheLoopLine(t *testing.T) {
	_, e := fixtureLab(t)
	buildDir, err := filepath.Abs(filepath.Join("testdata", "timeout-loop"))
	if err != nil {
		t.Fatal(err)
	}
	runs := readFixture(t, "timeout-loop.jsonl", buildDir)
	run := runs[fixtureModule+"/results"]
	run.action = "fail" // the exit status, as runGroup records it
	res := interpret(e, run, nil, "", nil, pathMapper{buildDir: buildDir, module: fixtureModule})
	if res.Status != StatusError || !strings.Contains(res.Reason, "timed out after 10s") || !strings.Contains(res.Reason, "stuck at results/reconciler.go:33") {
		t.Errorf("grade %s, reason %q; want a timeout stuck at results/reconciler.go:33", res.Status, res.Reason)
	}
	if !strings.Contains(res.Output, "results/reconciler.go:33 +0x1b") || strings.Contains(res.Output, "reconciler.go:1 ") {
		t.Errorf("the dump does not show the loop's line:\n%s", res.Output)
	}
}

// TestControlPlaneGoneLeavesExercisesUngraded: checks that failed because
// the control plane went away are errors of the environment, not grades:
// the report says so and progress keeps the previous grade. Passing and
// non-compiling exercises keep their grades.
func TestControlPlaneGoneLeavesExercisesUngraded(t *testing.T) {
	lab, e := fixtureLab(t)
	paths := pathMapper{buildDir: "/tmp/build", module: fixtureModule}
	runs := readFixture(t, "controlplane-gone.jsonl", paths.buildDir)
	gone := interpret(e, runs[fixtureModule+"/results"], nil, "", nil, paths)
	if gone.Status != StatusFail || !strings.Contains(gone.Reason, "connection refused") {
		t.Fatalf("the fixture grades %s (%s), want a connection-refused failure", gone.Status, gone.Reason)
	}
	manager, _ := lab.Exercise("manager")
	basics, _ := lab.Exercise("basics")
	passed := &Result{Exercise: manager, Status: StatusPass, ran: true}
	broken := &Result{Exercise: basics, Status: StatusError, Reason: "does not compile: basics/reconciler.go:3:1: x"}
	results := []*Result{passed, broken, gone}
	if !failedWhileRunning(results) {
		t.Fatal("a failed check that ran does not call for a probe")
	}
	markControlPlaneGone(results, errors.New("control plane at https://127.0.0.1:1: connection refused"))

	if gone.Status != StatusError || !gone.Ungraded || gone.Reason != controlPlaneGoneReason || !strings.Contains(gone.Output, "connection refused") {
		t.Errorf("after the control plane went away: %+v", gone)
	}
	if passed.Status != StatusPass || passed.Ungraded || broken.Status != StatusError || broken.Ungraded {
		t.Errorf("other exercises changed: passed %+v, broken %+v", passed, broken)
	}

	earlier := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	progress := workspace.NewProgress(lab.ID)
	progress.Record(e.ID, StatusPass, earlier)
	report := &Report{Lab: lab, Results: results, Started: time.Now()}
	report.Record(progress)
	if p := progress.Exercises[e.ID]; p.Status != StatusPass || !p.CheckedAt.Equal(earlier) {
		t.Errorf("the ungraded exercise's progress became %+v, want the earlier pass", p)
	}
	if p := progress.Exercises[manager.ID]; p == nil || p.Status != StatusPass {
		t.Errorf("the passed exercise was not recorded: %+v", p)
	}

	var human strings.Builder
	if err := report.WriteHuman(&human, HumanOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(human.String(), "! 3. Choosing the Result") || !strings.Contains(human.String(), "stopped answering during the check") {
		t.Errorf("the report does not say the control plane stopped answering:\n%s", human.String())
	}
	if strings.Count(human.String(), "hint ") != 1 { // the broken exercise's hint only
		t.Errorf("the report offers a hint for an ungraded exercise:\n%s", human.String())
	}
}

// TestSecondCheckSaysItIsWaiting: a check that finds another check of the
// same workspace holding the build folder says once that it waits, waits,
// and can be interrupted while waiting; it gets the folder once freed.
func TestSecondCheckSaysItIsWaiting(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("LAB_STATE_DIR", t.TempDir())
	lab, _ := fixtureLab(t)
	ws := t.TempDir()
	_, _, unlock, err := lockBuildDir(ws, "")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { unlock() }()

	var log labtest.SyncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Check(ctx, Options{Lab: lab, Dir: ws, Kubeconfig: "unused", Log: &log})
		done <- err
	}()
	const msg = "waiting for another build of this workspace's checks to finish (a lab check, or lab's own in the background)…"
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(log.String(), msg) {
		if time.Now().After(deadline) {
			t.Fatalf("no waiting message; log: %q", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(5 * lockPoll) // more tries, no more messages
	if n := strings.Count(log.String(), msg); n != 1 {
		t.Errorf("the waiting message came %d times", n)
	}
	cancel()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "check interrupted") {
			t.Errorf("Check interrupted while waiting = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Check did not stop waiting when interrupted")
	}

	// Once the first check lets go, a waiting one gets the folder.
	calls := 0
	got := make(chan error, 1)
	go func() {
		_, _, unlock2, err := lockBuildDirWaiting(context.Background(), ws, "", func() { calls++ })
		if err == nil {
			unlock2()
		}
		got <- err
	}()
	time.Sleep(3 * lockPoll)
	unlock()
	unlock = func() {}
	select {
	case err := <-got:
		if err != nil || calls != 1 {
			t.Errorf("waiting for the lock: %v, told %d times", err, calls)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the lock was not taken once free")
	}
}

// TestHumanReportSaysTheFirstFailureOnce: the reason ends with the first
// failed check's message, so the output under it does not repeat it.
func TestHumanReportSaysTheFirstFailureOnce(t *testing.T) {
	lab, e := fixtureLab(t)
	msg := "expected queue.add_after, saw queue.add_rate_limited"
	report := &Report{Lab: lab, Results: []*Result{{
		Exercise: e, Status: StatusFail,
		Reason: "ChoosingTheResult › dependency not ready: " + msg,
		Output: msg + "\nexpected something else, saw more",
	}}}
	var human strings.Builder
	if err := report.WriteHuman(&human, HumanOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(human.String(), msg); n != 1 {
		t.Errorf("the first failure is said %d times:\n%s", n, human.String())
	}
	if !strings.Contains(human.String(), "│ expected something else, saw more") {
		t.Errorf("the other failures are gone:\n%s", human.String())
	}
}

// TestResultsJSONKeepsTheRaceReason: a data race is reported in
// results.json even when checks failed besides it; an ordinary failure,
// which its check's message already says, is not said twice.
func TestResultsJSONKeepsTheRaceReason(t *testing.T) {
	lab, e := fixtureLab(t)
	failing := TestResult{Name: "TestChoosingTheResult/dependency_ready", Status: StatusFail, Message: "expected queue.add_after, saw queue.add_rate_limited"}
	for _, tc := range []struct {
		reason string
		whole  bool
	}{
		{reason: "data race: two goroutines touch the same memory without synchronization (at results/reconciler.go:18)", whole: true},
		{reason: "ChoosingTheResult › dependency ready: " + failing.Message, whole: false},
	} {
		report := &Report{Lab: lab, Results: []*Result{{Exercise: e, Status: StatusFail, Reason: tc.reason,
			Tests: []TestResult{{Name: "TestChoosingTheResult", Status: StatusFail}, failing}}}}
		var said []string
		for _, test := range report.Exercism().Tests {
			said = append(said, test.Message)
		}
		if got := slices.Contains(said, tc.reason); got != tc.whole {
			t.Errorf("reason %q in results.json: %v, want %v (messages %q)", tc.reason, got, tc.whole, said)
		}
	}
}
