package checker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/operator-lab/lab/internal/proc"
	"github.com/operator-lab/lab/internal/tally"
	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/checkkit"
)

// buildAllowance bounds building an exercise group's test binaries (a cold
// build compiles controller-runtime and client-go). The test binaries' own
// -test.timeout catches hangs in the checks.
const buildAllowance = 15 * time.Minute

// TrimPath is in the go command of every private build (checks, runner).
// Without it the go build cache keys each compiled package by its folder,
// and every workspace has its own build folder: a second learner's
// workspace, a fresh `lab init` or a test's would compile again what
// another compiled from the same sources. Positions in what the binaries
// print then start with the module's path, which LearnerPositions maps to
// the learner's files as it does the build folder's.
const TrimPath = "-trimpath"

// testEvent is one line of `go test -json` (cmd/test2json).
type testEvent struct {
	Time        time.Time
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string
	FailedBuild string
}

// packageRun is everything `go test` said about one package.
type packageRun struct {
	action      string // pass, fail, skip ("" = no verdict)
	failedBuild bool
	buildOutput boundedText
	output      boundedText // the package's own output (not inside a test)
	tests       map[string]*testRun
	order       []string
	elapsed     time.Duration

	// failedBuildBy is the package whose build failed this one (the fail
	// event names it); its build output says why.
	failedBuildBy string
	// record is what the test binary recorded of its run (nil: none, as
	// when it never got to the end of its tests).
	record *checkkit.Record
}

// readRecord reads a test binary's record; nil if there is none or it
// cannot be read (which no pass survives).
func readRecord(path string) *checkkit.Record {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var r checkkit.Record
	if json.Unmarshal(b, &r) != nil {
		return nil
	}
	return &r
}

type testRun struct {
	name   string
	action string // pass, fail, skip, ""
	output boundedText
}

func (p *packageRun) test(name string) *testRun {
	t := p.tests[name]
	if t == nil {
		t = &testRun{name: name}
		p.tests[name] = t
		p.order = append(p.order, name)
	}
	return t
}

// group is a set of exercises whose test binaries one `go test -c` builds:
// they share the race flag. Each binary then runs with its exercise's own
// timeout.
type group struct {
	race      bool
	exercises []*labs.Exercise
	timeouts  map[*labs.Exercise]time.Duration
	// prebuilt are the exercises whose binaries are not built but given
	// (Options.prebuilt).
	prebuilt map[*labs.Exercise]*prebuiltBinary
}

// prebuiltBinary is an exercise's test binary that a check runs instead of
// building one. Only the grader's own tests give one: they link many
// learner variants of an exercise into one binary, which env selects,
// where a learner's check links one binary per exercise.
type prebuiltBinary struct {
	path string
	env  []string
	// output, when set, is what the check reads of the test2json stream
	// instead of the stream itself (the variants' own package paths put
	// back to the exercise's).
	output func(io.Reader) io.Reader
}

// toBuild are the exercises of the group that are built.
func (g group) toBuild() []*labs.Exercise {
	return slices.DeleteFunc(slices.Clone(g.exercises), func(e *labs.Exercise) bool { return g.prebuilt[e] != nil })
}

// groupsOf groups the exercises by their race flag, the race group first:
// checks under the race detector run longest, and a group built first runs
// first while the next one builds.
func groupsOf(exercises []*labs.Exercise, timeout time.Duration, race bool, prebuilt map[*labs.Exercise]*prebuiltBinary) []group {
	var gs []group
	for _, e := range exercises {
		r := e.Race || race
		i := slices.IndexFunc(gs, func(g group) bool { return g.race == r })
		if i < 0 {
			gs = append(gs, group{race: r, timeouts: map[*labs.Exercise]time.Duration{}, prebuilt: prebuilt})
			i = len(gs) - 1
		}
		gs[i].exercises = append(gs[i].exercises, e)
		gs[i].timeouts[e] = e.Timeout.Duration
		if timeout > 0 {
			gs[i].timeouts[e] = timeout
		}
	}
	slices.SortStableFunc(gs, func(a, b group) int {
		if a.race == b.race {
			return 0
		}
		if a.race {
			return -1
		}
		return 1
	})
	return gs
}

// groupOutcome is what building and running one group's checks gave:
// what was said per package import path, the go command's own stderr, and
// the error that kept them from building or running.
type groupOutcome struct {
	runs   map[string]*packageRun
	stderr string
	err    error
}

// runGroups builds the groups' test binaries one group at a time (two go
// commands at once would only slow each other on a small machine) and runs
// each group's binaries as soon as they are built, every group's sharing
// one pool of as many runs at once as there are CPUs: a group's build
// overlaps the runs of the groups before it.
func runGroups(ctx context.Context, lab *labs.Lab, buildDir, binDir string, groups []group, env []string) []groupOutcome {
	outcomes := make([]groupOutcome, len(groups))
	slots := make(chan struct{}, runtime.NumCPU())
	test2json := test2jsonCommand(ctx, buildDir, env)
	var wg sync.WaitGroup
	previousBuilt := make(chan struct{})
	close(previousBuilt)
	for i, g := range groups {
		built := make(chan struct{})
		wg.Add(1)
		go func(previousBuilt <-chan struct{}) {
			defer wg.Done()
			<-previousBuilt
			var stderr boundedText
			runs, err := buildGroup(ctx, buildDir, binDir, g, env, &stderr)
			close(built)
			if err == nil {
				err = runBuilt(ctx, lab, buildDir, binDir, g, env, test2json, slots, runs, &stderr)
			}
			outcomes[i] = groupOutcome{runs: runs, stderr: stderr.String(), err: err}
		}(previousBuilt)
		previousBuilt = built
	}
	wg.Wait()
	return outcomes
}

// test2jsonCommand is how the check binaries are run through test2json:
// the go command's own test2json program, found once per check with `go
// tool -n` and then run directly, since `go tool test2json` would start
// the go command (a quarter of a CPU-second) for every binary. When the
// go command cannot say where it is, it is asked every time.
func test2jsonCommand(ctx context.Context, buildDir string, env []string) []string {
	cmd := proc.Command(ctx, "go", "tool", "-n", "test2json")
	cmd.Dir = buildDir
	cmd.Env = env
	out, err := cmd.Output()
	if path := strings.TrimSpace(string(out)); err == nil && filepath.IsAbs(path) && !strings.ContainsAny(path, "\n") {
		return []string{path}
	}
	return []string{"go", "tool", "test2json"}
}

// runBuilt runs the test binaries of one built group through test2json
// (the command test2json gives), each holding a slot while it runs, and
// adds what they said to runs. What runs are immutable copies of the
// binaries, made before any of them ran (sealedBinaries).
func runBuilt(ctx context.Context, lab *labs.Lab, buildDir, binDir string, g group, env, test2json []string, slots chan struct{}, runs map[string]*packageRun, stderr *boundedText) error {
	// Each binary writes its record into a folder of this run's.
	recordDir, err := os.MkdirTemp("", "lab-check-records-")
	if err != nil {
		return fmt.Errorf("create the checks' record folder: %w", err)
	}
	defer func() { _ = os.RemoveAll(recordDir) }()
	var toRun []*labs.Exercise
	var names []string
	for _, e := range g.exercises {
		if r := runs[lab.Module+"/"+e.Package]; r != nil && r.failedBuild {
			continue // the build events say why; a binary left from an earlier check must not run
		}
		if g.prebuilt[e] != nil {
			toRun = append(toRun, e)
			continue
		}
		name := path.Base(e.Package) + ".test"
		if _, err := os.Stat(filepath.Join(binDir, name)); err != nil {
			continue
		}
		toRun = append(toRun, e)
		names = append(names, name)
	}
	sealed, err := sealBinaries(binDir, names)
	if err != nil {
		return err
	}
	defer sealed.close()
	defer sealed.verifyBuilt()
	// A prebuilt binary is sealed as a built one is: the learner's code of
	// one run must not change what the next runs.
	prebuilt := map[*labs.Exercise]string{}
	for _, e := range toRun {
		p := g.prebuilt[e]
		if p == nil {
			continue
		}
		s, err := sealBinaries(filepath.Dir(p.path), []string{filepath.Base(p.path)})
		if err != nil {
			return err
		}
		defer s.close()
		defer s.verifyBuilt()
		if prebuilt[e], err = s.path(filepath.Base(p.path)); err != nil {
			return err
		}
	}

	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	for _, e := range toRun {
		pkg := lab.Module + "/" + e.Package
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			pre := g.prebuilt[e]
			bin, ok := prebuilt[e]
			var err error
			if !ok {
				bin, err = sealed.path(path.Base(e.Package) + ".test")
			}
			if err != nil {
				mu.Lock()
				defer mu.Unlock()
				if firstErr == nil {
					firstErr = fmt.Errorf("run the checks of %s: %w", e.ID, err)
				}
				return
			}
			timeout := g.timeouts[e]
			runCtx, cancel := context.WithTimeout(ctx, timeout+time.Minute)
			defer cancel()
			own := map[string]*packageRun{}
			var errOut boundedText
			started := time.Now()
			recordPath := filepath.Join(recordDir, e.ID+".json")
			binEnv := append(slices.Clone(env), checkkit.RecordEnv+"="+recordPath)
			var output func(io.Reader) io.Reader
			if pre != nil {
				binEnv, output = append(binEnv, pre.env...), pre.output
			}
			args := append(slices.Clone(test2json[1:]), "-t", "-p", pkg, bin,
				"-test.v=test2json", "-test.count=1", "-test.paniconexit0", "-test.timeout="+timeout.String())
			exitCode, err := runJSON(runCtx, filepath.Join(buildDir, e.Package), binEnv, &errOut, own, output, test2json[0], args...)
			// test2json run by hand gives no package verdict (the go command
			// adds it under `go test`): the exit status is the verdict.
			if own[pkg] == nil {
				own[pkg] = &packageRun{tests: map[string]*testRun{}}
			}
			own[pkg].action, own[pkg].elapsed = "pass", time.Since(started)

			if exitCode != 0 {
				own[pkg].action = "fail"
			}
			own[pkg].record = readRecord(recordPath)
			mu.Lock()
			defer mu.Unlock()
			if stray := own[""]; stray != nil { // text that was not JSON: keep it with the package
				own[pkg].output.WriteString(stray.output.String())
				delete(own, "")
			}
			for k, v := range own {
				runs[k] = v
			}
			stderr.WriteString(errOut.String())
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("run the checks of %s: %w", e.ID, err)
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// buildGroup builds the test binaries of one group into binDir with
// `go test -c`, returning what the go command said per package; its
// stderr goes to stderr.
//
// Building with -c into binDir, which outlives the build folder, matters
// for speed: `go test -c` leaves a binary that is already up to date alone,
// so a check of unchanged code skips linking (the biggest cost of a warm
// check), which `go test` would redo every time.
func buildGroup(ctx context.Context, buildDir, binDir string, g group, env []string, stderr *boundedText) (map[string]*packageRun, error) {
	exercises := g.toBuild()
	runs := map[string]*packageRun{}
	if len(exercises) == 0 {
		return runs, nil
	}
	args := append(checkBuildArgs(binDir, g.race), "-json")
	for _, e := range exercises {
		args = append(args, "./"+e.Package)
	}
	buildCtx, cancel := context.WithTimeout(ctx, buildAllowance)
	defer cancel()
	before := binaryStamps(binDir, exercises)
	code, err := runJSON(buildCtx, buildDir, env, stderr, runs, nil, "go", args...)
	tally.Add(tally.Link, changedStamps(before, binaryStamps(binDir, exercises)))
	if err != nil {
		return runs, fmt.Errorf("build the checks: %w", err)
	}
	failedBuilds := 0
	for _, r := range runs {
		if r.failedBuild {
			failedBuilds++
		}
	}
	if code != 0 && failedBuilds == 0 {
		// The go command failed before building any package (a broken
		// go.mod, say): nothing in binDir is from this build.
		return nil, fmt.Errorf("go test -c: %s", firstLine(stderr.String()))
	}
	return runs, nil
}

// checkBuildArgs are the go command's arguments, before the packages, that
// build check binaries into binDir.
func checkBuildArgs(binDir string, race bool) []string {
	// Without the symbol table and DWARF the link is shorter; stack
	// traces and the race detector's reports keep their file:line, which
	// come from the runtime's own tables.
	args := []string{"test", "-c", TrimPath, "-ldflags=-s -w", "-o", binDir + string(filepath.Separator)}
	if race {
		args = append(args, "-race")
	}
	return args
}

// binaryStamps tells each of the exercises' test binaries in binDir by
// its size and time, so that a build can tell which it linked anew.
func binaryStamps(binDir string, exercises []*labs.Exercise) map[string]string {
	out := map[string]string{}
	for _, e := range exercises {
		if fi, err := os.Stat(filepath.Join(binDir, path.Base(e.Package)+".test")); err == nil {
			out[e.ID] = fmt.Sprint(fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return out
}

// changedStamps counts the binaries after has that before had not, or had otherwise.
func changedStamps(before, after map[string]string) int {
	n := 0
	for id, stamp := range after {
		if before[id] != stamp {
			n++
		}
	}
	return n
}

// runJSON runs a command printing `go test -json` events in dir, adds what
// it printed to runs and returns its exit code. A non-zero exit is not an
// error (failing tests exit 1); failing to start or finish is.
func runJSON(ctx context.Context, dir string, env []string, stderr *boundedText, runs map[string]*packageRun, output func(io.Reader) io.Reader, name string, args ...string) (int, error) {
	// proc stops everything the command started (the test binary, its
	// control-plane clients, whatever learner code spawned) when the check
	// is cancelled or lab dies.
	cmd := proc.Command(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return -1, err
	}
	if err := cmd.Start(); err != nil {
		return -1, fmt.Errorf("start %s (is Go installed and on PATH?): %w", name, err)
	}
	var events io.Reader = stdout
	if output != nil {
		events = output(stdout)
	}
	parseErr := parseTestJSON(events, runs)
	waitErr := cmd.Wait()
	if ctx.Err() != nil {
		return -1, fmt.Errorf("did not finish in time: %w", context.Cause(ctx))
	}
	if parseErr != nil {
		return -1, parseErr
	}
	var exit *exec.ExitError
	if errors.As(waitErr, &exit) {
		return exit.ExitCode(), nil
	}
	if waitErr != nil {
		return -1, waitErr
	}
	return 0, nil
}

// parseTestJSON reads a `go test -json` stream into per-package runs.
// Lines that are not JSON (the go command prints some errors as text) are
// kept as package-less output under "".
func parseTestJSON(r io.Reader, runs map[string]*packageRun) error {
	get := func(pkg string) *packageRun {
		p := runs[pkg]
		if p == nil {
			p = &packageRun{tests: map[string]*testRun{}}
			runs[pkg] = p
		}
		return p
	}
	lines := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(lines)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		var ev testEvent
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			get("").output.Write(append(line, '\n'))
			continue
		}
		switch ev.Action {
		case "build-output":
			get(buildPackage(ev.ImportPath)).buildOutput.WriteString(ev.Output)
		case "build-fail":
			get(buildPackage(ev.ImportPath)).failedBuild = true
		case "output":
			p := get(ev.Package)
			if ev.Test != "" {
				p.test(ev.Test).output.WriteString(ev.Output)
			} else {
				p.output.WriteString(ev.Output)
			}
		case "pass", "fail", "skip":
			p := get(ev.Package)
			if ev.Test != "" {
				p.test(ev.Test).action = ev.Action
				continue
			}
			p.action = ev.Action
			p.elapsed = time.Duration(ev.Elapsed * float64(time.Second))
			if ev.FailedBuild != "" {
				p.failedBuild, p.failedBuildBy = true, buildPackage(ev.FailedBuild)
			}
		case "run":
			get(ev.Package).test(ev.Test)
		}
	}
}

// readLine reads one line without its newline. A line longer than
// outputLimit is cut there (the rest is read and dropped): no JSON event is
// that long, and text that is must not cost memory without end.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line) < outputLimit {
			line = append(line, chunk[:min(len(chunk), outputLimit-len(line))]...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(line) > 0:
			return line, nil
		case err != nil && err != io.EOF:
			return nil, fmt.Errorf("read go test output: %w", err)
		case err != nil:
			return nil, err
		}
		return bytes.TrimSuffix(line, []byte("\n")), nil
	}
}

// buildPackage turns a build event's ImportPath ("pkg [pkg.test]") into the package.
func buildPackage(importPath string) string {
	if i := strings.Index(importPath, " ["); i >= 0 {
		importPath = importPath[:i]
	}
	return strings.TrimSuffix(importPath, "_test")
}

// GoEnv is the environment of the go commands and test binaries of a
// private build: the caller's, pointed at kubeconfig's control plane, in
// module mode with the build's own go.mod (no go.work), plus extra.
func GoEnv(kubeconfig string, extra []string) []string {
	env := os.Environ()
	goflags := "-mod=mod"
	var kept []string
	for _, kv := range env {
		switch {
		case strings.HasPrefix(kv, "GOFLAGS="):
			goflags = strings.TrimSpace(strings.TrimPrefix(kv, "GOFLAGS=") + " -mod=mod")
		case strings.HasPrefix(kv, "KUBECONFIG="), strings.HasPrefix(kv, "GOWORK="):
		default:
			kept = append(kept, kv)
		}
	}
	kept = append(kept, "GOFLAGS="+goflags, "GOWORK=off", "KUBECONFIG="+kubeconfig)
	return append(kept, extra...)
}

// sortedTests returns a package's tests in the order they started.
func (p *packageRun) sortedTests() []*testRun {
	out := make([]*testRun, 0, len(p.order))
	for _, n := range p.order {
		out = append(out, p.tests[n])
	}
	return out
}
