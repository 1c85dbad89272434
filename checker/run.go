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
	"strings"
	"syscall"
	"time"

	"github.com/operator-lab/lab/labs"
)

// buildAllowance is added to an exercise group's test timeout to bound the
// whole `go test` run, compile and link included. The test binary's own
// -timeout catches hangs in the checks; this catches a hung build.
const buildAllowance = 10 * time.Minute

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
	buildOutput strings.Builder
	output      strings.Builder // the package's own output (not inside a test)
	tests       map[string]*testRun
	order       []string
	elapsed     time.Duration
}

type testRun struct {
	name   string
	action string // pass, fail, skip, ""
	output strings.Builder
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

// group is a set of exercises run by one `go test` invocation: they share
// the race flag and the timeout.
type group struct {
	race      bool
	timeout   time.Duration
	exercises []*labs.Exercise
}

func groupsOf(exercises []*labs.Exercise, timeout time.Duration, race bool) []group {
	var gs []group
	for _, e := range exercises {
		g := group{race: e.Race || race, timeout: e.Timeout.Duration}
		if timeout > 0 {
			g.timeout = timeout
		}
		found := false
		for i := range gs {
			if gs[i].race == g.race && gs[i].timeout == g.timeout {
				gs[i].exercises = append(gs[i].exercises, e)
				found = true
				break
			}
		}
		if !found {
			g.exercises = []*labs.Exercise{e}
			gs = append(gs, g)
		}
	}
	return gs
}

// runGroup runs `go test -json` for one group in buildDir and returns what it
// said per package import path, plus the go command's own stderr.
func runGroup(ctx context.Context, lab *labs.Lab, buildDir string, g group, env []string) (map[string]*packageRun, string, error) {
	args := []string{"test", "-json", "-count=1", "-timeout", g.timeout.String()}
	if g.race {
		args = append(args, "-race")
	}
	for _, e := range g.exercises {
		args = append(args, "./"+e.Package)
	}
	ctx, cancel := context.WithTimeout(ctx, g.timeout+buildAllowance)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = buildDir
	cmd.Env = env
	// Own process group, so a cancelled check also stops the test binaries
	// go test started (and the control-plane clients inside them).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", fmt.Errorf("run go test: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("run go test (is Go installed and on PATH?): %w", err)
	}
	runs, parseErr := parseTestJSON(stdout)
	waitErr := cmd.Wait()
	if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return runs, stderr.String(), fmt.Errorf("go test did not finish within %s", g.timeout+buildAllowance)
	}
	if parseErr != nil {
		return runs, stderr.String(), parseErr
	}
	var exit *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exit) {
		return runs, stderr.String(), fmt.Errorf("go test: %w", waitErr)
	}
	return runs, stderr.String(), nil
}

// parseTestJSON reads a `go test -json` stream into per-package runs.
// Lines that are not JSON (the go command prints some errors as text) are
// kept as package-less output under "".
func parseTestJSON(r io.Reader) (map[string]*packageRun, error) {
	runs := map[string]*packageRun{}
	get := func(pkg string) *packageRun {
		p := runs[pkg]
		if p == nil {
			p = &packageRun{tests: map[string]*testRun{}}
			runs[pkg] = p
		}
		return p
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
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
				p.failedBuild = true
			}
		case "run":
			get(ev.Package).test(ev.Test)
		}
	}
	if err := sc.Err(); err != nil {
		return runs, fmt.Errorf("read go test output: %w", err)
	}
	return runs, nil
}

// buildPackage turns a build event's ImportPath ("pkg [pkg.test]") into the package.
func buildPackage(importPath string) string {
	if i := strings.Index(importPath, " ["); i >= 0 {
		importPath = importPath[:i]
	}
	return strings.TrimSuffix(importPath, "_test")
}

// testEnv is the environment of the go test run: the caller's, pointed at
// the control plane, in module mode with the build's own go.mod.
func testEnv(kubeconfig string, extra []string) []string {
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
