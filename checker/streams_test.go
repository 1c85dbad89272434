package checker

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/checkkit"
)

var update = flag.Bool("update", false, "rewrite the testdata/*.golden outputs of TestInterpretRecordedStreams")

// The streams pass, fail, compile-error, panic, timeout and race.jsonl are
// recorded by testdata/streams/record.sh: the results exercise of a
// throwaway example.com/lab31 module (testdata/streams/<case>/reconciler.go
// and the stand-in check testdata/streams/check/results_check_test.go),
// built with `go test -c -json` and run under `go tool test2json` the way
// runGroup does. The build folder's path is replaced by BUILDDIR.

// streamRun parses a recorded stream the way runGroup fills its runs: the
// package's verdict is the test binary's exit status (exit < 0: the binary
// never ran, the build failed).
func streamRun(t *testing.T, name, buildDir string, exit int) (run, loose *packageRun) {
	t.Helper()
	runs := readFixture(t, name, buildDir)
	explainFailedBuilds(runs)
	run = runs[fixtureModule+"/results"]
	if exit >= 0 {
		if run == nil {
			run = &packageRun{tests: map[string]*testRun{}}
		}
		run.action = "pass"
		if exit != 0 {
			run.action = "fail"
		}
	}
	return run, runs[""]
}

// TestInterpretRecordedStreams: what a learner reads for each way a
// check's test binary can end — the grade, the reason, each check's
// status, and the output (testdata/<case>.golden; -update rewrites them).
func TestInterpretRecordedStreams(t *testing.T) {
	_, e := fixtureLab(t)
	const buildDir = "/tmp/lab-check-1"
	passed := &checkkit.Record{Tests: map[string]string{"TestChoosingTheResult": "pass"}}
	passTests := []string{"TestChoosingTheResult pass", "TestChoosingTheResult/dependency_ready pass", "TestChoosingTheResult/dependency_not_ready pass"}
	for _, tc := range []struct {
		name   string
		stream string // the recorded stream, if not name.jsonl
		exit   int    // the test binary's exit status as record.sh printed it; -1: not built
		// record is what the binary recorded of its run (lab's TestMain).
		record *checkkit.Record
		status string
		reason string
		tests  []string // "name status" in the order they started
	}{
		{name: "pass", exit: 0, record: passed, status: StatusPass, tests: passTests},
		// A passing stream is believed only with the record to back it.
		{
			name: "pass-without-record", stream: "pass.jsonl", exit: 0, status: StatusError,
			reason: "tampering: the output says the checks passed, but the checks left no record of finishing (did something end the test process early?)",
			tests:  passTests,
		},
		{
			name: "pass-with-a-failing-record", stream: "pass.jsonl", exit: 0, status: StatusError,
			record: &checkkit.Record{Exit: 1, Tests: map[string]string{"TestChoosingTheResult": "fail"}},
			reason: "tampering: the output says the checks passed, but the tests ended with exit code 1",
			tests:  passTests,
		},
		{
			name: "pass-with-a-check-missing", stream: "pass.jsonl", exit: 0, status: StatusError,
			record: &checkkit.Record{Tests: map[string]string{}},
			reason: "tampering: the output says the checks passed, but TestChoosingTheResult never ran",
			tests:  passTests,
		},
		{
			name: "fail", exit: 1, status: StatusFail,
			reason: "ChoosingTheResult › dependency not ready: expected queue.add_after, saw queue.add_rate_limited",
			tests:  []string{"TestChoosingTheResult fail", "TestChoosingTheResult/dependency_ready pass", "TestChoosingTheResult/dependency_not_ready fail"},
		},
		{
			name: "compile-error", exit: -1, status: StatusError,
			reason: "does not compile: results/reconciler.go:8:6: declared and not used: broken",
		},
		{
			name: "panic", exit: 1, status: StatusError,
			reason: "panicked: assignment to entry in nil map [recovered, repanicked] at results/reconciler.go:10",
			tests:  []string{"TestChoosingTheResult fail", "TestChoosingTheResult/dependency_ready fail"},
		},
		{
			name: "timeout", exit: 1, status: StatusError,
			reason: "timed out after 3s: the checks never finished (a reconcile or a wait that never returns?); stuck at results/reconciler.go:8; still running: TestChoosingTheResult, TestChoosingTheResult/dependency_ready",
			tests:  []string{"TestChoosingTheResult error", "TestChoosingTheResult/dependency_ready fail"},
		},
		{
			name: "race", exit: 1, status: StatusFail,
			reason: "data race: two goroutines touch the same memory without synchronization (at results/reconciler.go:18)",
			tests:  []string{"TestChoosingTheResult fail", "TestChoosingTheResult/dependency_ready fail", "TestChoosingTheResult/dependency_not_ready pass"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stream := tc.stream
			if stream == "" {
				stream = tc.name + ".jsonl"
			}
			run, loose := streamRun(t, stream, buildDir, tc.exit)
			if run != nil {
				run.record = tc.record
			}
			res := interpret(e, run, loose, "", nil, pathMapper{buildDir: buildDir, module: fixtureModule})
			if res.Status != tc.status || res.Reason != tc.reason {
				t.Errorf("grade %s, reason\n\t%q\nwant %s, reason\n\t%q", res.Status, res.Reason, tc.status, tc.reason)
			}
			var tests []string
			for _, r := range res.Tests {
				tests = append(tests, r.Name+" "+r.Status)
			}
			if strings.Join(tests, "\n") != strings.Join(tc.tests, "\n") {
				t.Errorf("checks:\n\t%s\nwant:\n\t%s", strings.Join(tests, "\n\t"), strings.Join(tc.tests, "\n\t"))
			}
			for _, leak := range []string{buildDir, "BUILDDIR", fixtureModule + "/", "=== RUN", "--- FAIL"} {
				if strings.Contains(res.Output, leak) {
					t.Errorf("the output shows %q:\n%s", leak, res.Output)
				}
			}
			golden := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(res.Output+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if res.Output+"\n" != string(want) {
				t.Errorf("output:\n%s\nwant (%s):\n%s", res.Output, golden, want)
			}
		})
	}
}

// TestTrimKeepsWhatTheLearnerReads: go test's own chatter goes, a hidden
// check's file:line before its message goes, and only the last
// maxOutputLines lines stay, saying how many went before.
func TestTrimKeepsWhatTheLearnerReads(t *testing.T) {
	in := "=== RUN   TestX\n    results_check_test.go:24 (check): expected a, saw b\n--- FAIL: TestX (0.00s)\n\nFAIL\nFAIL\texample.com/lab31/results\t0.01s\nok  \texample.com/lab31/reads\t0.01s\nPASS\n  kept as it is\n"
	if got, want := trim(in), "expected a, saw b\n  kept as it is"; got != want {
		t.Errorf("trim = %q, want %q", got, want)
	}
	var long []string
	for i := range maxOutputLines + 5 {
		long = append(long, "line "+strconv.Itoa(i))
	}
	got := strings.Split(trim(strings.Join(long, "\n")), "\n")
	if len(got) != maxOutputLines+1 || got[0] != "… 5 earlier lines" || got[1] != "line 5" || got[len(got)-1] != long[len(long)-1] {
		t.Errorf("trim of %d lines = %d lines, starting %q, %q", len(long), len(got), got[0], got[1])
	}
}

// TestPathMapperSpeaksOfTheLearnersFiles: positions in the build folder and
// import paths become the workspace's own paths; hidden checks are marked.
func TestPathMapperSpeaksOfTheLearnersFiles(t *testing.T) {
	m := pathMapper{buildDir: "/tmp/lab-check-1", module: fixtureModule}
	for in, want := range map[string]string{
		"/tmp/lab-check-1/results/reconciler.go:41 +0x1b":      "results/reconciler.go:41 +0x1b",
		"example.com/lab31/results.(*Reconciler).Reconcile()":  "results.(*Reconciler).Reconcile()",
		"./reconciler.go:3:1: x\n./other.go:4: y":              "reconciler.go:3:1: x\nother.go:4: y",
		"/tmp/lab-check-1/results/results_check_test.go:22 +0": "results/results_check_test.go:22 (check) +0",
	} {
		if got := m.mapText(in); got != want {
			t.Errorf("mapText(%q) = %q, want %q", in, got, want)
		}
	}
	for pkg, want := range map[string]bool{
		"": false, fixtureModule: false, fixtureModule + "/results": false, supportModule + "/checkkit": false,
		"sigs.k8s.io/controller-runtime": true, "example.com/lab31x/results": true,
	} {
		if got := m.outside(pkg); got != want {
			t.Errorf("outside(%q) = %v, want %v", pkg, got, want)
		}
	}
}

// TestParseTestJSONKeepsTextLines: what the go command prints as text
// among the JSON events is kept as package-less output.
func TestParseTestJSONKeepsTextLines(t *testing.T) {
	runs := map[string]*packageRun{}
	in := "go: downloading example.com/x v1.0.0\n" + `{"Action":"output","Package":"p","Output":"hello\n"}` + "\nnot json {\n"
	if err := parseTestJSON(strings.NewReader(in), runs); err != nil {
		t.Fatal(err)
	}
	if got := runs[""].output.String(); got != "go: downloading example.com/x v1.0.0\nnot json {\n" {
		t.Errorf("package-less output = %q", got)
	}
	if got := runs["p"].output.String(); got != "hello\n" {
		t.Errorf("p's output = %q", got)
	}
}

// TestRaceExercisesBuildWithTheRaceDetector: an exercise that asks for the
// race detector gets a build of its own with -race; --race puts every
// exercise in it; --timeout overrides each exercise's own.
func TestRaceExercisesBuildWithTheRaceDetector(t *testing.T) {
	lab, err := labs.Get("4.4")
	if err != nil {
		t.Fatal(err)
	}
	breaker, err := lab.Exercise("breaker")
	if err != nil {
		t.Fatal(err)
	}
	gs := groupsOf(lab.Exercises, 0, false, nil)
	if len(gs) != 2 {
		t.Fatalf("%d groups, want one with the race detector and one without", len(gs))
	}
	if !gs[0].race {
		t.Error("the group without the race detector comes first; the race group's slower runs should start first")
	}
	for _, g := range gs {
		if got := slices.Contains(g.exercises, breaker); got != g.race {
			t.Errorf("group race=%v holds the breaker exercise: %v", g.race, got)
		}
		for _, e := range g.exercises {
			if g.timeouts[e] != e.Timeout.Duration {
				t.Errorf("%s's timeout %s, want its own %s", e.ID, g.timeouts[e], e.Timeout.Duration)
			}
		}
	}
	gs = groupsOf(lab.Exercises, 7*time.Second, true, nil)
	if len(gs) != 1 || !gs[0].race || len(gs[0].exercises) != len(lab.Exercises) || gs[0].timeouts[breaker] != 7*time.Second {
		t.Errorf("with --race --timeout 7s: %+v", gs)
	}
}
