package checker_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/operator-lab/lab/checker/checkertest"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/internal/proc"
	"github.com/operator-lab/lab/labs"
)

// The control plane the checks in this package run against is started by
// the first test that asks for it (kubeconfig) and stopped after all tests:
// the tests that only interpret recorded streams run without one.
var (
	controlPlaneOnce sync.Once
	controlPlane     *controlplane.ControlPlane
	controlPlaneErr  error
)

func TestMain(m *testing.M) {
	if code, ok := proc.RunIfSupervisor(); ok {
		os.Exit(code)
	}
	// Build folders and state of this binary's own, not the user's.
	cleanup, err := labtest.HermeticProcess()
	if err != nil {
		fmt.Fprintln(os.Stderr, "checker tests:", err)
		os.Exit(1)
	}
	code := m.Run()
	if controlPlane != nil {
		_ = controlPlane.Stop()
	}
	cleanup()
	os.Exit(code)
}

// checkTurns bounds how many checks this package's tests run at once.
// The checks' own waits count wall time (a controller must act within
// checkkit.WaitTimeout): more checks than the cores can serve would only
// make each slower, and a slow enough one fail for want of a CPU.
var checkTurns = make(chan struct{}, 3)

// takeCheckTurn waits for a turn and returns what gives it back.
func takeCheckTurn() (done func()) {
	checkTurns <- struct{}{}
	return func() { <-checkTurns }
}

// kubeconfig returns the path of the package's control plane's
// kubeconfig, starting the control plane on first use.
func kubeconfig(tb testing.TB) string {
	tb.Helper()
	controlPlaneOnce.Do(func() { controlPlane, controlPlaneErr = startControlPlane() })
	if controlPlaneErr != nil {
		tb.Fatal(controlPlaneErr)
	}
	return controlPlane.KubeconfigPath
}

// startControlPlane starts a control plane with every lab's CRDs.
func startControlPlane() (*controlplane.ControlPlane, error) {
	all, err := labs.All()
	if err != nil {
		return nil, err
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, lab := range all {
		labCRDs, err := lab.CustomResourceDefinitions()
		if err != nil {
			return nil, err
		}
		crds = append(crds, labCRDs...)
	}
	cp, err := controlplane.Start(context.Background(), controlplane.Options{CRDs: crds, SetupLog: os.Stderr})
	if err != nil {
		return nil, fmt.Errorf("start control plane: %w", err)
	}
	return cp, nil
}

func lab31(t *testing.T) *labs.Lab { return checkertest.Lab(t, "3.1") }

// solutionWith returns an exercise file's solution with old replaced by new.
func solutionWith(t *testing.T, lab *labs.Lab, file, old, new string) string {
	t.Helper()
	e := lab.ExerciseForFile(file)
	b, err := e.Solution(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s's solution has no %q", file, old)
	}
	return strings.Replace(string(b), old, new, 1)
}

func check(t *testing.T, opts checker.Options) *checker.Report {
	t.Helper()
	opts.Kubeconfig = kubeconfig(t)
	before := labtest.TakeSnapshot(t, opts.Dir)
	// No deadline of its own: the check bounds its builds and runs, and
	// go test's -timeout a check that hangs.
	done := takeCheckTurn()
	report, err := checker.Check(t.Context(), opts)
	done()
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	var human strings.Builder
	_ = report.WriteHuman(&human, checker.HumanOptions{})
	t.Logf("report:\n%s", human.String())
	if changes := before.Changes(labtest.TakeSnapshot(t, opts.Dir)); len(changes) > 0 {
		t.Errorf("the check changed the workspace: %v", changes)
	}
	return report
}

func result(t *testing.T, r *checker.Report, id string) *checker.Result {
	t.Helper()
	for _, res := range r.Results {
		if res.Exercise.ID == id {
			return res
		}
	}
	t.Fatalf("no result for exercise %s", id)
	return nil
}

func expectResult(t *testing.T, r *checker.Report, id, status string, reasonParts ...string) {
	t.Helper()
	res := result(t, r, id)
	if res.Status != status {
		t.Errorf("exercise %s: status %s (%s), want %s", id, res.Status, res.Reason, status)
		return
	}
	for _, part := range reasonParts {
		if !strings.Contains(res.Reason, part) {
			t.Errorf("exercise %s: reason %q does not mention %q", id, res.Reason, part)
		}
	}
}

// TestMixedSubmission covers, in one build: an exercise that passes, one
// that panics, one that does not compile, and one whose folder holds the
// learner's own test files — a failing test, a TestMain that exits 0 and a
// file named like a hidden check — which must change nothing.
func TestMixedSubmission(t *testing.T) {
	lab := lab31(t)
	dir := checkertest.Workspace(t, lab, true, map[string]string{
		// Panics only for a missing HelloWorld, so the check that asks for
		// one directly panics at once (a panic inside a controller's
		// reconcile is recovered by controller-runtime).
		"basics/reconciler.go": solutionWith(t, lab, "basics/reconciler.go",
			"		return ctrl.Result{}, client.IgnoreNotFound(err)\n",
			"		var missing map[string]int\n		missing[req.Name]++\n		return ctrl.Result{}, client.IgnoreNotFound(err)\n"),
		"results/reconciler.go": solutionWith(t, lab, "results/reconciler.go",
			"	ready, err := r.Dependency.Ready(ctx, &hello)",
			"	ready, err := r.Dependency.Ready(ctx, hello)"),
		"reads/mine_test.go":        "package reads\n\nimport \"testing\"\n\nfunc TestMine(t *testing.T) { t.Fatal(\"the learner's own failing test\") }\n",
		"reads/main_test.go":        "package reads\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) { os.Exit(0) }\n",
		"reads/reads_check_test.go": "package reads_test\n\nimport \"testing\"\n\nfunc TestCacheVersusAPIReads(t *testing.T) {}\n",
	})
	report := check(t, checker.Options{Lab: lab, Dir: dir})
	expectResult(t, report, "manager", checker.StatusPass)
	expectResult(t, report, "basics", checker.StatusError, "panicked", "assignment to entry in nil map", "basics/reconciler.go:")
	expectResult(t, report, "results", checker.StatusError, "does not compile", "results/reconciler.go:")
	expectResult(t, report, "reads", checker.StatusPass)
	if report.Passed() {
		t.Error("a report with errors says it passed")
	}

	// Exercism results.json: overall fail, one error test per broken exercise.
	ex := report.Exercism()
	if ex.Version != 3 || ex.Status != checker.StatusFail {
		t.Errorf("results.json version %d status %s, want 3 fail", ex.Version, ex.Status)
	}
	statuses := map[int][]string{}
	for _, test := range ex.Tests {
		statuses[test.TaskID] = append(statuses[test.TaskID], test.Status)
	}
	if got := statuses[3]; len(got) != 1 || got[0] != checker.StatusError {
		t.Errorf("results exercise (task 3) tests = %v, want one error", got)
	}
	if got := statuses[1]; len(got) < 4 {
		t.Errorf("manager exercise (task 1) has %d tests, want one per check", len(got))
	}
	var junit bytes.Buffer
	if err := report.WriteJUnit(&junit); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(junit.String(), `<testsuite name="3.1/results" tests="1" failures="0" errors="1"`) {
		t.Errorf("JUnit XML lacks the results suite with one error:\n%s", junit.String())
	}
}

// BenchmarkCheck measures `lab check` of a solved workspace: warm (build
// cache warm, control plane running, the workspace checked before) and cold
// (an empty build cache: every dependency compiled again).
func BenchmarkCheck(b *testing.B) {
	for _, id := range []string{"3.1", "4.4"} {
		lab := checkertest.Lab(b, id)
		run := func(b *testing.B, dir string, env []string) {
			report, err := checker.Check(context.Background(), checker.Options{Lab: lab, Dir: dir, Kubeconfig: kubeconfig(b), Env: env})
			if err != nil {
				b.Fatal(err)
			}
			if !report.Passed() {
				b.Fatalf("the solutions did not pass: %+v", report.Results[0])
			}
		}
		b.Run(id+"/warm", func(b *testing.B) {
			dir := checkertest.Workspace(b, lab, true, nil)
			run(b, dir, nil)
			timedLoop(b, func(int) {}, func() { run(b, dir, nil) })
		})
		b.Run(id+"/cold", func(b *testing.B) {
			dir := checkertest.Workspace(b, lab, true, nil)
			for b.Loop() {
				b.StopTimer()
				cache := b.TempDir()
				b.StartTimer()
				run(b, dir, []string{"GOCACHE=" + cache})
			}
		})
	}
}

// TestEditAfterPassingIsCheckedAgain: test binaries are kept between checks
// for speed; a change that breaks the build must never let the previous
// binary run.
func TestEditAfterPassingIsCheckedAgain(t *testing.T) {
	lab := lab31(t)
	dir := checkertest.Workspace(t, lab, true, nil)
	e, _ := lab.Exercise("results")
	only := []*labs.Exercise{e}
	expectResult(t, check(t, checker.Options{Lab: lab, Dir: dir, Exercises: only}), "results", checker.StatusPass)
	labtest.WriteFile(t, dir, "results/reconciler.go", solutionWith(t, lab, "results/reconciler.go", "package results", "package results\n\nvar broken int = \"text\""))
	expectResult(t, check(t, checker.Options{Lab: lab, Dir: dir, Exercises: only}), "results", checker.StatusError, "does not compile", "results/reconciler.go:")
}
