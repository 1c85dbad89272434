package checker

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/checkkit"
	"github.com/operator-lab/lab/labs/checkkit/cluster"
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
	// Log, when set, is told what the check is waiting for (another check
	// of the same workspace holding its build folder).
	Log io.Writer
	// Points is what each exercise (by id) is worth in the score
	// (workspace.Points); nil: its lab.yaml points.
	Points map[string]int
	// Learner is who the check is for: the checks label what they create
	// in the cluster with it (checkkit.LearnerLabel).
	Learner string

	// prebuilt gives some exercises' test binaries instead of building
	// them: only the grader's own tests set it (variantbin_test.go).
	prebuilt map[*labs.Exercise]*prebuiltBinary
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

// Score is what the checked exercises earned, of what they are worth.
func (r *Report) Score() (earned, possible int) {
	for _, res := range r.Results {
		earned += res.Score
		possible += res.Points
	}
	return earned, possible
}

// score sets what each result is worth (points by exercise id, else its
// lab.yaml points) and earned: all of it for a pass, none otherwise.
func score(results []*Result, points map[string]int) {
	for _, r := range results {
		r.Points = r.Exercise.Points
		if n, ok := points[r.Exercise.ID]; ok {
			r.Points = n
		}
		r.Score = 0
		if r.Status == StatusPass {
			r.Score = r.Points
		}
	}
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
	// Ungraded says the environment failed, not the code (the control
	// plane stopped answering): the status is error, and Record keeps the
	// exercise's previous grade.
	Ungraded bool
	// Points is what the exercise is worth; Score what it earned: all of
	// them when it passed, none otherwise.
	Points, Score int

	ran bool // the checks' test binary ran (it built)
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
// and maps the results to exercises. When some did not pass and the control
// plane no longer answers, those are left ungraded (Result.Ungraded): the
// environment failed, not the code. The workspace itself is never written.
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

	// Code the policy rejects is graded without being run.
	exercises, refused, err := admitted(opts.Lab, opts.Dir, exercises)
	if err != nil {
		return nil, err
	}
	report.Results = append(report.Results, refused...)

	build, err := NewBuild(ctx, opts.Lab, opts.Dir, ForChecks, checkFiles(exercises), func() {
		if opts.Log != nil {
			fmt.Fprintln(opts.Log, "waiting for another build of this workspace's checks to finish (a lab check, or lab's own in the background)…")
		}
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, interrupted(ctx)
		}
		return nil, err
	}
	defer build.Close()
	if opts.KeepBuildDir {
		report.BuildDir = build.Dir
	} else {
		// The next check recreates it at the same path, which is what keeps
		// the build cache warm; in between it only takes disk space.
		defer func() { _ = os.RemoveAll(build.Dir) }()
	}

	// The run's id goes on every namespace its checks make; when the run
	// ends, whatever a check binary that died left is deleted by it.
	runID := checkkit.Name("run") // a valid label value as it is
	defer func() {
		if err := deleteRun(opts.Kubeconfig, runID); err != nil && opts.Log != nil {
			fmt.Fprintf(opts.Log, "lab: %v\n", err)
		}
	}()
	env := GoEnv(opts.Kubeconfig, append(slices.Clone(opts.Env), checkkit.RunEnv+"="+runID, checkkit.LearnerEnv+"="+opts.Learner))
	paths := build.paths
	groups := groupsOf(exercises, opts.Timeout, opts.Race, opts.prebuilt)
	outcomes := runGroups(ctx, opts.Lab, build.Dir, build.BinDir, groups, env)
	if ctx.Err() != nil {
		return nil, interrupted(ctx)
	}
	for i, g := range groups {
		o := outcomes[i]
		explainFailedBuilds(o.runs)
		for _, e := range g.exercises {
			res := interpret(e, o.runs[opts.Lab.Module+"/"+e.Package], o.runs[""], o.stderr, o.err, paths)
			report.Results = append(report.Results, res)
		}
	}
	if failedWhileRunning(report.Results) {
		if gone := controlPlaneAnswers(ctx, opts.Kubeconfig); gone != nil {
			if ctx.Err() != nil {
				return nil, interrupted(ctx)
			}
			markControlPlaneGone(report.Results, gone)
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
	score(report.Results, opts.Points)
	report.Duration = time.Since(report.Started)
	return report, nil
}

// interrupted is Check's error once ctx is cancelled.
func interrupted(ctx context.Context) error {
	return fmt.Errorf("check interrupted: %w", context.Cause(ctx))
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
		first := FirstCompileError(out)
		switch {
		case first == "":
			res.Reason = "does not build, and go said nothing about why: run `go build ./...` in the workspace to see"
		case strings.Contains(first, "(check)"):
			res.Reason = "your code no longer provides what the checks use: " + first
		case paths.outside(run.failedBuildBy):
			// A package from another module failed: go.mod requires a
			// version that cannot be had, or replaces it with a missing folder.
			res.Reason = "a module go.mod requires cannot be used: " + first
		default:
			res.Reason = "does not compile: " + first
		}
		return res
	}
	res.ran = true

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
		hang := hangReport(paths.realLoopLines(mapped, e), e)
		if where := firstLearnerFrame(hang, e); where != "" {
			res.Reason += "; stuck at " + where
		}
		if running := runningTests(all); running != "" {
			res.Reason += "; still running: " + running
		}
		res.Output = trim(hang)
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
		if why := distrust(e, run.record); why != "" {
			res.Status = StatusError
			res.Reason = "tampering: the output says the checks passed, but " + why
			res.Output = trim(mapped)
			return res
		}
		res.Status = StatusPass
	}
	return res
}

// distrust says why a pass the output claims is not borne out by the test
// binary's own record (checkkit.Record), or "" when it is: the tests
// exited 0 and every hidden test of the exercise passed.
func distrust(e *labs.Exercise, rec *checkkit.Record) string {
	if rec == nil {
		return "the checks left no record of finishing (did something end the test process early?)"
	}
	if rec.Exit != 0 {
		return fmt.Sprintf("the tests ended with exit code %d", rec.Exit)
	}
	names, err := hiddenTests(e)
	if err != nil {
		return err.Error()
	}
	for _, name := range names {
		switch got := rec.Tests[name]; got {
		case "pass":
		case "":
			return name + " never ran"
		default:
			return fmt.Sprintf("%s did not pass (%s)", name, got)
		}
	}
	return ""
}

// hiddenTests are the top-level test functions of an exercise's checks.
func hiddenTests(e *labs.Exercise) ([]string, error) {
	var names []string
	for _, c := range e.Checks {
		b, err := checkSource(e, c)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(token.NewFileSet(), c, b, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("exercise %s: check %s: %w", e.ID, c, err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") && fn.Name.Name != "TestMain" {
				names = append(names, fn.Name.Name)
			}
		}
	}
	return names, nil
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

// FirstCompileError is the first compiler error ("file:line:col: message")
// in what go printed, or else its first line.
func FirstCompileError(out string) string {
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

// outside reports whether pkg belongs to neither the workspace's module
// nor the support module lab adds: a dependency go.mod requires.
func (m pathMapper) outside(pkg string) bool {
	in := func(module string) bool { return pkg == module || strings.HasPrefix(pkg, module+"/") }
	return pkg != "" && !in(m.module) && !in(supportModule)
}

func (m pathMapper) mapText(s string) string {
	s = strings.ReplaceAll(s, m.buildDir+string(filepath.Separator), "")
	s = strings.ReplaceAll(s, m.module+"/", "")
	s = dotSlashRe.ReplaceAllString(s, "$1")
	return checkFileRe.ReplaceAllString(s, "$1:$2 (check)")
}

// explainFailedBuilds gives each package whose build failed because another
// package failed (a module go.mod cannot load, a broken package it imports)
// that package's build output about it: go files the output under the
// package that failed, not under the exercises importing it.
func explainFailedBuilds(runs map[string]*packageRun) {
	for pkg, r := range runs {
		if !r.failedBuild || r.buildOutput.Len() > 0 || r.failedBuildBy == "" || r.failedBuildBy == pkg {
			continue
		}
		if cause := runs[r.failedBuildBy]; cause != nil {
			r.buildOutput.WriteString(sectionsAbout(cause.buildOutput.String(), pkg))
		}
	}
}

// sectionsAbout keeps, of build output made of "# package" sections, the
// sections about pkg ("# pkg" or "# pkg [pkg.test]"), or all of it if none is.
func sectionsAbout(out, pkg string) string {
	var kept strings.Builder
	keep := false
	for _, line := range strings.SplitAfter(out, "\n") {
		if header, ok := strings.CutPrefix(line, "# "); ok {
			header = strings.TrimSpace(header)
			keep = header == pkg || strings.HasPrefix(header, pkg+" ")
		}
		if keep {
			kept.WriteString(line)
		}
	}
	if kept.Len() == 0 {
		return out
	}
	return kept.String()
}

// probeTimeout bounds asking the control plane whether it still answers.
const probeTimeout = 5 * time.Second

// controlPlaneGoneReason is the reason of an exercise left ungraded because
// the control plane went away during the check.
const controlPlaneGoneReason = "the control plane stopped answering during the check (was `lab env down` run?) — nothing was graded; run `lab check` again"

// runCleanupTimeout bounds deleting what a run's check binaries left.
const runCleanupTimeout = 30 * time.Second

// deleteRun deletes the namespaces the check binaries of run runID left in
// the cluster of kubeconfig, if any: binaries delete their own, unless
// they die first (a timeout, an interrupt). It runs after an interrupt
// too, so it has a context of its own. A control plane that no longer
// answers is no error: its namespaces went with it.
func deleteRun(kubeconfig, runID string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil // Check's own run reports that the kubeconfig is unusable
	}
	ctx, cancel := context.WithTimeout(context.Background(), runCleanupTimeout)
	defer cancel()
	if _, err := cluster.DeleteRun(ctx, cfg, runID); err != nil && controlPlaneAnswers(ctx, kubeconfig) == nil {
		return fmt.Errorf("delete the namespaces of check run %s: %w", runID, err)
	}
	return nil
}

// controlPlaneAnswers returns nil when the control plane of kubeconfig
// answers /readyz within probeTimeout, else what went wrong.
func controlPlaneAnswers(ctx context.Context, kubeconfig string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("load kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.Timeout = probeTimeout
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("control plane client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if err := dc.RESTClient().Get().AbsPath("/readyz").Do(ctx).Error(); err != nil {
		return fmt.Errorf("control plane at %s: %w", cfg.Host, err)
	}
	return nil
}

// failedWhileRunning reports whether an exercise whose checks ran did not
// pass: only then can the control plane have been the cause.
func failedWhileRunning(results []*Result) bool {
	for _, r := range results {
		if r.ran && r.Status != StatusPass {
			return true
		}
	}
	return false
}

// markControlPlaneGone turns the exercises whose checks ran and did not pass
// into ungraded errors: the control plane was gone (cause says how), so
// their failures say nothing about the code.
func markControlPlaneGone(results []*Result, cause error) {
	for _, r := range results {
		if !r.ran || r.Status == StatusPass {
			continue
		}
		r.Status, r.Ungraded, r.Reason = StatusError, true, controlPlaneGoneReason
		r.Output = strings.TrimSpace(cause.Error() + "\n" + r.Output)
	}
}

// frameFuncRe reads a goroutine dump's function line (after path mapping):
// "results.(*Reconciler).Reconcile(0x0?, ...)" gives the receiver type
// Reconciler and the function Reconcile (closures, ".func1", count as their
// enclosing function).
var frameFuncRe = regexp.MustCompile(`^(?:\S+/)?[^./\s]+\.(?:\(\*?(\w+)(?:\[[^\]]*\])?\)\.)?(\w+)`)

// realLoopLines fixes a goroutine dump's frames in the exercise's files that
// say line 1: the compiler gives the jump of an empty loop (for {}) no line
// of its own, so a goroutine stopped there is reported at line 1. The loop
// is looked up in the named function's source, in the build folder.
func (m pathMapper) realLoopLines(dump string, e *labs.Exercise) string {
	lines := strings.Split(dump, "\n")
	for i := 1; i < len(lines); i++ {
		pos := strings.TrimSpace(lines[i])
		for _, f := range e.Files {
			if pos != f+":1" && !strings.HasPrefix(pos, f+":1 ") {
				continue
			}
			fn := frameFuncRe.FindStringSubmatch(strings.TrimSpace(lines[i-1]))
			if fn == nil {
				continue
			}
			if line := emptyLoopLine(filepath.Join(m.buildDir, filepath.FromSlash(f)), fn[1], fn[2]); line > 0 {
				lines[i] = strings.Replace(lines[i], f+":1", fmt.Sprintf("%s:%d", f, line), 1)
			}
		}
	}
	return strings.Join(lines, "\n")
}

// emptyLoopLine returns the line of the first empty loop without a
// condition in function name (a method of recv, when recv is set) of the Go
// file, or 0.
func emptyLoopLine(file, recv, name string) int {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		return 0
	}
	line := 0
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil || fd.Name.Name != name || receiverName(fd) != recv {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if loop, ok := n.(*ast.ForStmt); ok && line == 0 && loop.Cond == nil && len(loop.Body.List) == 0 {
				line = fset.Position(loop.Pos()).Line
			}
			return line == 0
		})
	}
	return line
}

// receiverName is the type name of a method's receiver ("" for a function).
func receiverName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return ""
	}
	t := fd.Recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	switch g := t.(type) {
	case *ast.IndexExpr:
		t = g.X
	case *ast.IndexListExpr:
		t = g.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
