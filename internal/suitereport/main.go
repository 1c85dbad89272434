// Command suitereport runs `make test`: it starts the suite's `go test`
// commands (lanes that run at the same time, stages that run one after
// another), prints a line per package as it ends and the whole output of
// what failed, keeps each lane's `go test -json` stream in a folder, and
// ends with the suite's cost: each package's wall time, the slowest tests,
// how many control planes were started and binaries linked (the counts lab
// keeps in $LAB_TEST_TALLY, see internal/tally), and `N passed, N failed`.
//
//	suitereport [-o DIR] [-flags 'GO TEST FLAGS'] NAME='ARGS' ... [--then NAME='ARGS' ...] ...
//
// ARGS are `go test` arguments (packages and flags, split on spaces).
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/operator-lab/lab/internal/tally"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == execWrapFlag {
		os.Exit(execWrap(os.Args[2], os.Args[3:]))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// lane is one `go test` command.
type lane struct {
	name string
	args []string
}

func run(argv []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("suitereport", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "test-results", "the folder for the lanes' go test -json streams and the tally")
	flags := fs.String("flags", "", "go test flags every lane gets")
	if err := fs.Parse(argv); err != nil {
		return 2
	}
	stages, err := parseStages(fs.Args(), strings.Fields(*flags))
	if err != nil {
		fmt.Fprintln(stderr, "suitereport:", err)
		return 2
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(stderr, "suitereport:", err)
		return 1
	}
	tallyPath, err := filepath.Abs(filepath.Join(*out, "tally"))
	if err != nil {
		fmt.Fprintln(stderr, "suitereport:", err)
		return 1
	}
	_ = os.Remove(tallyPath)
	cpuPath := filepath.Join(filepath.Dir(tallyPath), "cpu")
	_ = os.Remove(cpuPath)
	wrap, err := execWrapArg(cpuPath)
	if err != nil {
		fmt.Fprintln(stderr, "suitereport:", err)
		return 1
	}
	root, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(stderr, "suitereport:", err)
		return 1
	}
	for _, stage := range stages {
		for i := range stage {
			stage[i].args = append([]string{"-exec", wrap}, stage[i].args...)
		}
	}

	s := &suite{out: stdout, packages: map[string]*pkgResult{}}
	started := time.Now()
	failed := false
	for _, stage := range stages {
		var wg sync.WaitGroup
		for _, l := range stage {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := s.runLane(l, filepath.Join(*out, l.name+".json"), tallyPath, stderr); err != nil {
					s.say("lane %s: %v\n", l.name, err)
					s.mu.Lock()
					failed = true
					s.mu.Unlock()
				}
			}()
		}
		wg.Wait()
	}
	s.summary(time.Since(started), readTally(tallyPath), readCPU(cpuPath, root))
	if failed || s.failed > 0 {
		return 1
	}
	return 0
}

// parseStages splits NAME=ARGS words into stages at each --then.
func parseStages(words, common []string) ([][]lane, error) {
	stages := [][]lane{nil}
	for _, w := range words {
		if w == "--then" {
			stages = append(stages, nil)
			continue
		}
		name, args, ok := strings.Cut(w, "=")
		if !ok || name == "" || strings.TrimSpace(args) == "" {
			return nil, fmt.Errorf("lane %q: want NAME='go test arguments'", w)
		}
		l := lane{name: name, args: append(slices.Clone(common), strings.Fields(args)...)}
		stages[len(stages)-1] = append(stages[len(stages)-1], l)
	}
	for _, st := range stages {
		if len(st) == 0 {
			return nil, errors.New("an empty stage: give each --then at least one lane")
		}
	}
	return stages, nil
}

// event is one line of `go test -json`.
type event struct {
	Action     string
	Package    string
	Test       string
	Elapsed    float64
	Output     string
	ImportPath string
}

// pkgResult is what the suite learned of one package.
type pkgResult struct {
	lane    string
	action  string
	elapsed float64
	output  strings.Builder             // the package's own lines
	tests   map[string]*strings.Builder // each running test's lines
	ran     bool                        // a test binary ran (not "no test files")
}

// testTime is one finished test.
type testTime struct {
	name    string
	elapsed float64
}

type suite struct {
	out io.Writer

	mu       sync.Mutex
	packages map[string]*pkgResult
	builds   map[string]*strings.Builder
	tests    []testTime
	passed   int
	failed   int
	skipped  int
	lanes    []string
	cpu      time.Duration // all lanes' CPU time
}

func (s *suite) say(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.out, format, args...)
}

// runLane runs one go test command, keeping its JSON stream in path.
func (s *suite) runLane(l lane, path, tallyPath string, stderr io.Writer) error {
	started := time.Now()
	keep, err := os.Create(path)
	if err != nil {
		return err
	}
	defer keep.Close()
	cmd := exec.Command("go", append([]string{"test", "-json"}, l.args...)...)
	cmd.Env = append(os.Environ(), tally.Env+"="+tallyPath)
	cmd.Stderr = stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	s.say("lane %s: go test %s\n", l.name, strings.Join(l.args, " "))
	if err := cmd.Start(); err != nil {
		return err
	}
	lines := bufio.NewReaderSize(pipe, 1<<20)
	for {
		line, err := lines.ReadBytes('\n')
		if len(line) > 0 {
			_, _ = keep.Write(line)
			s.take(l.name, line)
		}
		if err != nil {
			break
		}
	}
	waitErr := cmd.Wait()
	// go test's own usage holds its compiles, links and (through the
	// -exec wrapper) its test binaries: all the CPU the lane cost.
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	s.mu.Lock()
	s.lanes = append(s.lanes, fmt.Sprintf("%s %s, CPU %s", l.name, time.Since(started).Round(time.Second), cpu.Round(time.Second)))
	s.cpu += cpu
	s.mu.Unlock()
	if waitErr != nil {
		return fmt.Errorf("go test: %w", waitErr)
	}
	return nil
}

// take folds one line of a lane's stream in, printing what a reader of
// the log needs as it happens.
func (s *suite) take(laneName string, line []byte) {
	var ev event
	if json.Unmarshal(line, &ev) != nil {
		s.say("%s", line) // not an event: the go command's own text
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch ev.Action {
	case "build-output":
		if s.builds == nil {
			s.builds = map[string]*strings.Builder{}
		}
		b := s.builds[ev.ImportPath]
		if b == nil {
			b = &strings.Builder{}
			s.builds[ev.ImportPath] = b
		}
		b.WriteString(ev.Output)
		return
	case "build-fail":
		if b := s.builds[ev.ImportPath]; b != nil {
			fmt.Fprintf(s.out, "build of %s failed:\n%s", ev.ImportPath, b.String())
		}
		return
	}
	if ev.Package == "" {
		return
	}
	p := s.packages[ev.Package]
	if p == nil {
		p = &pkgResult{lane: laneName, tests: map[string]*strings.Builder{}}
		s.packages[ev.Package] = p
	}
	switch ev.Action {
	case "start":
	case "run":
		p.ran = true
		p.tests[ev.Test] = &strings.Builder{}
	case "output":
		if ev.Test == "" {
			p.output.WriteString(ev.Output)
		} else if b := p.tests[ev.Test]; b != nil {
			b.WriteString(ev.Output)
		}
	case "pass", "fail", "skip":
		if ev.Test == "" {
			p.action, p.elapsed = ev.Action, ev.Elapsed
			s.packageEnded(ev.Package, p)
			return
		}
		s.testEnded(ev, p)
	}
}

func (s *suite) testEnded(ev event, p *pkgResult) {
	out := p.tests[ev.Test]
	delete(p.tests, ev.Test)
	switch ev.Action {
	case "pass":
		s.passed++
	case "skip":
		s.skipped++
	case "fail":
		s.failed++
		// Each test's own lines (go test -json gives a subtest's to the
		// subtest): a parent adds little to its failed subtests.
		if out != nil {
			fmt.Fprintf(s.out, "--- FAIL %s %s (%.1fs)\n%s", short(ev.Package), ev.Test, ev.Elapsed, indent(out.String()))
		}
	}
	s.tests = append(s.tests, testTime{short(ev.Package) + " " + ev.Test, ev.Elapsed})
}

func (s *suite) packageEnded(pkg string, p *pkgResult) {
	status := map[string]string{"pass": "ok  ", "fail": "FAIL", "skip": "skip"}[p.action]
	fmt.Fprintf(s.out, "%s %-48s %7.1fs  (%s)\n", status, short(pkg), p.elapsed, p.lane)
	if p.action == "fail" {
		// A package that failed outside a test (a panic, a timeout, a
		// TestMain that gave up) says why in its own output.
		if text := strings.TrimSpace(p.output.String()); text != "" {
			fmt.Fprintf(s.out, "output of %s:\n%s\n", short(pkg), indent(text+"\n"))
		}
		for name, out := range p.tests { // tests the binary never ended
			fmt.Fprintf(s.out, "--- unfinished %s %s\n%s", short(pkg), name, indent(out.String()))
		}
		if !p.ran && p.output.Len() == 0 {
			s.failed++ // a package that failed to build counts as a failure
		}
	}
	p.tests = nil
}

// summary prints the suite's cost and its verdict.
func (s *suite) summary(wall time.Duration, counts map[string]int, cpu map[string]time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.out
	fmt.Fprintf(w, "\n── make test: what the suite cost (wall %s, CPU %s on %d cores; lanes: %s) ──\n",
		wall.Round(time.Second), s.cpu.Round(time.Second), runtime.NumCPU(), strings.Join(s.lanes, "; "))
	type pk struct {
		name string
		*pkgResult
	}
	var pkgs []pk
	binaries := 0
	for name, p := range s.packages {
		if p.action == "" {
			continue
		}
		pkgs = append(pkgs, pk{name, p})
		if p.ran {
			binaries++
		}
	}
	slices.SortFunc(pkgs, func(a, b pk) int { return cmp.Compare(b.elapsed, a.elapsed) })
	fmt.Fprintln(w, "packages, slowest first (wall time of the test binary; CPU of it and all it waited for):")
	for _, p := range pkgs {
		if !p.ran && p.action != "fail" {
			continue
		}
		fmt.Fprintf(w, "  %-48s %7.1fs  CPU %7.1fs  %s  (%s)\n", short(p.name), p.elapsed, cpu[short(p.name)].Seconds(), p.action, p.lane)
	}
	slices.SortFunc(s.tests, func(a, b testTime) int { return cmp.Compare(b.elapsed, a.elapsed) })
	fmt.Fprintln(w, "the 10 slowest tests:")
	for _, t := range s.tests[:min(10, len(s.tests))] {
		fmt.Fprintf(w, "  %7.1fs  %s\n", t.elapsed, t.name)
	}
	fmt.Fprintf(w, "control planes started: %d\n", counts[tally.ControlPlane])
	fmt.Fprintf(w, "binaries linked: %d (%d test binaries of the suite, %d by lab's builds: checks, runners, lab itself)\n",
		binaries+counts[tally.Link], binaries, counts[tally.Link])
	fmt.Fprintf(w, "%d skipped\n", s.skipped)
	fmt.Fprintf(w, "%d passed, %d failed\n", s.passed, s.failed)
}

// readTally sums the counts lab's processes appended.
func readTally(path string) map[string]int {
	out := map[string]int{}
	b, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		var what string
		var n int
		if _, err := fmt.Sscanf(line, "%s %d", &what, &n); err == nil {
			out[what] += n
		}
	}
	return out
}

// short drops the module's path from a package's.
func short(pkg string) string {
	return cmp.Or(strings.TrimPrefix(strings.TrimPrefix(pkg, "github.com/operator-lab/lab"), "/"), ".")
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString("    " + l)
		}
	}
	if !strings.HasSuffix(s, "\n") {
		b.WriteString("\n")
	}
	return b.String()
}
