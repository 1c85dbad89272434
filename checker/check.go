package checker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/workspace"
)

// Statuses of an exercise, in Exercism's vocabulary.
const (
	StatusPass  = workspace.StatusPass
	StatusFail  = workspace.StatusFail
	StatusError = workspace.StatusError
)

// Options say what to check and where.
type Options struct {
	Lab *labs.Lab
	// Dir is the learner's workspace. It is only read.
	Dir string
	// Exercises to check; nil checks them all.
	Exercises []*labs.Exercise
	// Kubeconfig is the control plane the checks run against; the lab's
	// CRDs must already be installed there.
	Kubeconfig string
	// Env is added to the environment of `go test`.
	Env []string
	// Timeout, when set, replaces every exercise's own timeout.
	Timeout time.Duration
	// Race, when set, runs every exercise with the race detector.
	Race bool
	// KeepBuildDir keeps the private build folder after the check (until
	// the next check of the same workspace) and names it in the report.
	KeepBuildDir bool
}

// Report is the outcome of one check.
type Report struct {
	Lab      *labs.Lab
	Results  []*Result
	Started  time.Time
	Duration time.Duration
	// BuildDir is the private build folder, when it was kept.
	BuildDir string
}

// Passed reports whether every checked exercise passed.
func (r *Report) Passed() bool {
	for _, res := range r.Results {
		if res.Status != StatusPass {
			return false
		}
	}
	return len(r.Results) > 0
}

// Result is one exercise's grade.
type Result struct {
	Exercise *labs.Exercise
	Status   string
	// Reason is one line: what was expected and what was observed, or why
	// the checks could not run.
	Reason string
	// Output is the relevant output, trimmed, with the learner's own
	// file:line positions.
	Output string
	// Tests are the individual checks (subtests) with their outcomes.
	Tests    []TestResult
	Duration time.Duration
}

// TestResult is one check inside an exercise.
type TestResult struct {
	Name    string
	Status  string
	Message string
	Output  string
}

// Check grades the workspace: it copies it into a private build folder,
// adds the hidden checks and the observation layer, builds the exercises'
// test binaries, runs them (through test2json) against the control plane,
// and maps the results to exercises. The workspace itself is never written.
func Check(ctx context.Context, opts Options) (*Report, error) {
	if opts.Lab == nil {
		return nil, errors.New("checker: no lab given")
	}
	if opts.Kubeconfig == "" {
		return nil, errors.New("checker: no control plane (kubeconfig) given")
	}
	if _, err := os.Stat(opts.Dir); err != nil {
		return nil, fmt.Errorf("workspace %s: %w (create it with `lab init %s`)", opts.Dir, err, opts.Lab.ID)
	}
	exercises := opts.Exercises
	if len(exercises) == 0 {
		exercises = opts.Lab.Exercises
	}
	report := &Report{Lab: opts.Lab, Started: time.Now()}

	buildDir, binDir, unlock, err := lockBuildDir(opts.Dir, "")
	if err != nil {
		return nil, err
	}
	defer unlock()
	if opts.KeepBuildDir {
		report.BuildDir = buildDir
	} else {
		// The next check recreates it at the same path, which is what keeps
		// the build cache warm; in between it only takes disk space.
		defer os.RemoveAll(buildDir)
	}
	if err := prepare(opts.Lab, opts.Dir, buildDir, checkFiles(exercises)); err != nil {
		return nil, err
	}

	env := testEnv(opts.Kubeconfig, opts.Env)
	paths := pathMapper{buildDir: buildDir, module: opts.Lab.Module}
	for _, g := range groupsOf(exercises, opts.Timeout, opts.Race) {
		runs, stderr, runErr := runGroup(ctx, opts.Lab, buildDir, binDir, g, env)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("check interrupted: %w", context.Cause(ctx))
		}
		for _, e := range g.exercises {
			res := interpret(e, runs[opts.Lab.Module+"/"+e.Package], runs[""], stderr, runErr, paths)
			report.Results = append(report.Results, res)
		}
	}
	// Report in the lab's order whatever the grouping was.
	ordered := make([]*Result, 0, len(report.Results))
	for _, e := range opts.Lab.Exercises {
		for _, r := range report.Results {
			if r.Exercise == e {
				ordered = append(ordered, r)
			}
		}
	}
	report.Results = ordered
	report.Duration = time.Since(report.Started)
	return report, nil
}

var (
	timedOutRe = regexp.MustCompile(`panic: test timed out after (\S+)`)
	panicRe    = regexp.MustCompile(`(?m)^panic: (.*)$`)
	// A check's message line: "    file_test.go:12: text".
	checkMessageRe = regexp.MustCompile(`(?m)^\s+\S+_test\.go:\d+: (.*)$`)
	raceRe         = regexp.MustCompile(`WARNING: DATA RACE`)
)

// interpret turns what go test said about an exercise's package into a grade.
func interpret(e *labs.Exercise, run *packageRun, loose *packageRun, stderr string, runErr error, paths pathMapper) *Result {
	res := &Result{Exercise: e}
	if run != nil {
		res.Duration = run.elapsed
	}
	switch {
	case run == nil:
		res.Status = StatusError
		res.Reason = "the checks did not run"
		out := stderr
		if loose != nil {
			out = loose.output.String() + out
		}
		if runErr != nil {
			res.Reason += ": " + runErr.Error()
		} else if line := firstLine(paths.mapText(out)); line != "" {
			res.Reason += ": " + line
		}
		res.Output = trim(paths.mapText(out))
		return res

	case run.failedBuild:
		res.Status = StatusError
		out := paths.mapText(run.buildOutput.String())
		res.Output = trim(out)
		first := firstCompileError(out)
		if strings.Contains(first, "(check)") {
			res.Reason = "your code no longer provides what the checks use: " + first
		} else {
			res.Reason = "does not compile: " + first
		}
		return res
	}

	all := run.output.String()
	for _, t := range run.sortedTests() {
		all += t.output.String()
		res.Tests = append(res.Tests, TestResult{
			Name: t.name, Status: testStatus(t.action), Message: checkMessage(t.output.String()),
			Output: trim(paths.mapText(t.output.String())),
		})
	}
	mapped := paths.mapText(all)

	if m := timedOutRe.FindStringSubmatch(all); m != nil {
		res.Status = StatusError
		res.Reason = fmt.Sprintf("timed out after %s: the checks never finished (a reconcile or a wait that never returns?)", m[1])
		if running := runningTests(all); running != "" {
			res.Reason += "; still running: " + running
		}
		res.Output = trim(hangReport(mapped, e))
		return res
	}
	if raceRe.MatchString(all) {
		res.Status = StatusFail
		res.Reason = "data race: two goroutines touch the same memory without synchronization"
		if where := firstLearnerFrame(mapped, e); where != "" {
			res.Reason += " (at " + where + ")"
		}
		res.Output = trim(raceReport(mapped))
		return res
	}
	if m := panicRe.FindStringSubmatch(all); m != nil && run.action == "fail" {
		res.Status = StatusError
		res.Reason = "panicked: " + strings.TrimSpace(paths.mapText(m[1]))
		if where := firstLearnerFrame(mapped, e); where != "" {
			res.Reason += " at " + where
		}
		if i := strings.Index(mapped, "panic: "); i >= 0 {
			mapped = mapped[i:]
		}
		res.Output = trim(mapped)
		return res
	}

	failed := failedLeaves(res.Tests)
	passed := 0
	for _, t := range res.Tests {
		if t.Status == StatusPass {
			passed++
		}
	}
	switch {
	case len(failed) > 0:
		res.Status = StatusFail
		first := failed[0]
		res.Reason = readableTestName(first.Name) + ": " + first.Message
		if first.Message == "" {
			res.Reason = readableTestName(first.Name) + " failed"
		}
		var out []string
		for _, t := range failed {
			out = append(out, t.Output)
		}
		res.Output = trim(strings.Join(out, "\n"))
	case run.action == "fail":
		res.Status = StatusError
		res.Reason = "the check process failed outside any check"
		if line := firstLine(paths.mapText(run.output.String())); line != "" {
			res.Reason += ": " + line
		}
		res.Output = trim(mapped)
	case passed == 0:
		res.Status = StatusError
		res.Reason = "no checks ran (did something end the test process early, e.g. os.Exit in an init function?)"
		res.Output = trim(mapped)
	default:
		res.Status = StatusPass
	}
	return res
}

func testStatus(action string) string {
	switch action {
	case "pass":
		return StatusPass
	case "skip":
		return "skip"
	case "fail":
		return StatusFail
	default:
		return StatusError // never finished: a panic or a timeout ended the binary
	}
}

// failedLeaves returns the failed tests that have no failed subtests: the
// ones whose message says what went wrong.
func failedLeaves(tests []TestResult) []TestResult {
	var out []TestResult
	for _, t := range tests {
		if t.Status != StatusFail {
			continue
		}
		hasFailedChild := false
		for _, other := range tests {
			if other.Status == StatusFail && strings.HasPrefix(other.Name, t.Name+"/") {
				hasFailedChild = true
				break
			}
		}
		if !hasFailedChild || t.Message != "" {
			out = append(out, t)
		}
	}
	return out
}

// checkMessage is the first message a check printed (t.Errorf/Fatalf).
func checkMessage(output string) string {
	if m := checkMessageRe.FindStringSubmatch(output); m != nil {
		return strings.TrimSpace(m[1])
	}
	return ""
}

// readableTestName turns "TestChoosingTheResult/rate_limited_(retry_after_23s)"
// into "ChoosingTheResult › rate limited (retry after 23s)".
func readableTestName(name string) string {
	parts := strings.Split(name, "/")
	parts[0] = strings.TrimPrefix(parts[0], "Test")
	for i := range parts {
		parts[i] = strings.ReplaceAll(parts[i], "_", " ")
	}
	return strings.Join(parts, " › ")
}

var runningRe = regexp.MustCompile(`(?m)^\s+(Test\S*) \(`)

// runningTests lists the tests a timeout panic says were still running.
func runningTests(output string) string {
	_, after, ok := strings.Cut(output, "running tests:")
	if !ok {
		return ""
	}
	var names []string
	for _, m := range runningRe.FindAllStringSubmatch(after, 5) {
		names = append(names, m[1])
	}
	return strings.Join(names, ", ")
}

// firstLearnerFrame finds the first stack frame in one of the exercise's
// own files: "results/reconciler.go:41".
func firstLearnerFrame(output string, e *labs.Exercise) string {
	for _, line := range strings.Split(output, "\n") {
		line = strings.TrimSpace(line)
		for _, f := range e.Files {
			if strings.HasPrefix(line, f+":") {
				if i := strings.IndexByte(line, ' '); i > 0 {
					return line[:i]
				}
				return line
			}
		}
	}
	return ""
}

// hangReport keeps, from a timeout's goroutine dump, the goroutines that
// are inside the learner's files: that is where something never returns.
func hangReport(output string, e *labs.Exercise) string {
	start := strings.Index(output, "panic: test timed out")
	if start < 0 {
		return output
	}
	blocks := strings.Split(output[start:], "\n\n")
	kept := []string{blocks[0]} // the panic line and the running tests
	for _, b := range blocks[1:] {
		for _, f := range e.Files {
			if strings.Contains(b, f+":") {
				kept = append(kept, b)
				break
			}
		}
	}
	return strings.Join(kept, "\n\n")
}

// raceReport keeps the race detector's first report: the two accesses and
// where their goroutines came from.
func raceReport(output string) string {
	start := strings.Index(output, "WARNING: DATA RACE")
	if start < 0 {
		return output
	}
	report := output[start:]
	if end := strings.Index(report, "=================="); end > 0 {
		report = report[:end]
	}
	return report
}

var compileErrorRe = regexp.MustCompile(`(?m)^(\S+\.go:\d+(:\d+)?: .*)$`)

func firstCompileError(out string) string {
	if m := compileErrorRe.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return firstLine(out)
}

func firstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			return line
		}
	}
	return ""
}

// maxOutputLines bounds the output shown per exercise.
const maxOutputLines = 40

// trim keeps the last maxOutputLines lines, dropping go test's own chatter.
func trim(s string) string {
	var lines []string
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") || t == "FAIL" || t == "PASS" ||
			strings.HasPrefix(t, "FAIL\t") || strings.HasPrefix(t, "ok  \t") {
			continue
		}
		if m := checkLineRe.FindStringSubmatch(line); m != nil {
			line = m[1] // a check's message: its hidden file:line means nothing to the learner
		}
		lines = append(lines, line)
	}
	if len(lines) > maxOutputLines {
		lines = append([]string{fmt.Sprintf("… %d earlier lines", len(lines)-maxOutputLines)}, lines[len(lines)-maxOutputLines:]...)
	}
	return strings.Join(lines, "\n")
}

// pathMapper rewrites positions in the private build into the learner's
// own: "/tmp/lab-check-1/results/reconciler.go:41" and
// "example.com/lab31/results/reconciler.go:41" both become
// "results/reconciler.go:41"; hidden check files are marked "(check)".
type pathMapper struct {
	buildDir string
	module   string
}

var (
	checkFileRe = regexp.MustCompile(`(\S*_check_test\.go):(\d+)`)
	dotSlashRe  = regexp.MustCompile(`(?m)(^|\s)\./`)
	checkLineRe = regexp.MustCompile(`^\s*\S+_check_test\.go:\d+(?: \(check\))?: (.*)$`)
)

func (m pathMapper) mapText(s string) string {
	s = strings.ReplaceAll(s, m.buildDir+string(filepath.Separator), "")
	s = strings.ReplaceAll(s, m.module+"/", "")
	s = dotSlashRe.ReplaceAllString(s, "$1")
	return checkFileRe.ReplaceAllString(s, "$1:$2 (check)")
}
