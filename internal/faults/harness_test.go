package faults

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/internal/proc"
	"github.com/operator-lab/lab/labs/workspace"
)

// markerVar is inherited by every process a case's lab starts.
const markerVar = "LAB_FAULT_CASE"

// exitWithin is how soon lab must be gone after a stop signal, and its
// children after lab.
const exitWithin = 5 * time.Second

// labCase is one fault case: the lab binary with the case's own marker,
// temp folder, cache and (unless it shares the suite's) state folder.
type labCase struct {
	t        *testing.T
	bin      string
	marker   string
	tmp      string
	stateDir string
	cacheDir string
}

func newCase(t *testing.T, stateDir string) *labCase {
	t.Helper()
	bin, err := labtest.Binary()
	if err != nil {
		t.Fatal(err)
	}
	if stateDir == "" {
		stateDir = t.TempDir()
	}
	c := &labCase{t: t, bin: bin, marker: fmt.Sprintf("%s-%d", t.Name(), rand.Int64()),
		tmp: t.TempDir(), stateDir: stateDir, cacheDir: suiteCache}
	t.Cleanup(c.killLeftovers)
	return c
}

// env is the environment of the case's lab processes.
func (c *labCase) env(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, proc.TempRootEnv+"=") {
			env = append(env, kv)
		}
	}
	// GOCACHE stays the user's: under the case's XDG_CACHE_HOME it would
	// be empty, and every check would compile Kubernetes from scratch.
	return append(env, append([]string{markerVar + "=" + c.marker, "TMPDIR=" + c.tmp,
		"LAB_STATE_DIR=" + c.stateDir, "XDG_CACHE_HOME=" + c.cacheDir, "GOCACHE=" + goCache, "NO_COLOR=1",
		// The suite times each phase of a check: no build of lab's own
		// in the background may hold the build folder first.
		workspace.BackgroundBuildEnv + "=off"}, extra...)...)
}

// command is lab with args, in the case's environment.
func (c *labCase) command(args ...string) *exec.Cmd {
	cmd := exec.Command(c.bin, args...)
	cmd.Env = c.env()
	return cmd
}

// result is what a finished lab command printed and its exit code.
type result struct {
	out, errOut string
	code        int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.out, r.errOut)
}

// run runs lab to its end.
func (c *labCase) run(args ...string) result {
	c.t.Helper()
	cmd := c.command(args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := result{out: out.String(), errOut: errOut.String()}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		r.code = exit.ExitCode()
	} else if err != nil {
		c.t.Fatalf("run lab %v: %v", args, err)
	}
	c.noStackTrace(r.out + r.errOut)
	return r
}

// started is a lab command running in the background.
type started struct {
	cmd         *exec.Cmd
	out, errOut *labtest.SyncBuffer
	done        chan struct{}
}

func (c *labCase) start(args ...string) *started {
	c.t.Helper()
	cmd := c.command(args...)
	s := &started{cmd: cmd, out: &labtest.SyncBuffer{}, errOut: &labtest.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = s.out, s.errOut
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(s.done) }()
	return s
}

// signalAndWait sends sig to the started lab and fails unless it exits in time.
func (c *labCase) signalAndWait(s *started, sig syscall.Signal) result {
	c.t.Helper()
	_ = s.cmd.Process.Signal(sig)
	select {
	case <-s.done:
	case <-time.After(exitWithin):
		_ = s.cmd.Process.Signal(syscall.SIGQUIT) // a goroutine dump, for the report
		<-s.done
		c.t.Fatalf("lab %v did not exit within %s of %v; it printed:\n%s", s.cmd.Args[1:], exitWithin, sig, s.errOut.String())
	}
	r := result{out: s.out.String(), errOut: s.errOut.String(), code: s.cmd.ProcessState.ExitCode()}
	c.noStackTrace(r.out + r.errOut)
	return r
}

// terminal runs lab with args in a real terminal; its stderr and exit
// code go to files the case reads back.
func (c *labCase) terminal(args ...string) *inTerminal {
	c.t.Helper()
	dir := c.t.TempDir()
	term := &inTerminal{c: c, errFile: filepath.Join(dir, "stderr"), exitFile: filepath.Join(dir, "exit")}
	var line strings.Builder
	line.WriteString("env")
	for _, kv := range c.env() {
		if strings.HasPrefix(kv, markerVar+"=") || strings.HasPrefix(kv, "TMPDIR=") || strings.HasPrefix(kv, "LAB_") ||
			strings.HasPrefix(kv, "XDG_") || strings.HasPrefix(kv, "KUBEBUILDER_ASSETS=") || strings.HasPrefix(kv, "NO_COLOR=") ||
			strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "GO") {
			line.WriteString(" " + shellQuote(kv))
		}
	}
	line.WriteString(" " + shellQuote(c.bin))
	for _, a := range args {
		line.WriteString(" " + shellQuote(a))
	}
	fmt.Fprintf(&line, " 2>%s; echo $? >%s; sleep 600", shellQuote(term.errFile), shellQuote(term.exitFile))
	term.Tmux = labtest.NewTmux(c.t, 120, 40, line.String())
	return term
}

type inTerminal struct {
	*labtest.Tmux
	c                 *labCase
	errFile, exitFile string
}

// labPID is the lab process the terminal runs.
func (term *inTerminal) labPID() int {
	term.c.t.Helper()
	for _, pid := range term.c.processes() {
		if args := proc.CommandLine(pid); len(args) > 0 && args[0] == term.c.bin && !proc.IsSupervisor(args) {
			return pid
		}
	}
	term.c.t.Fatalf("no lab process runs in the terminal:\n%s", term.Screen())
	return 0
}

// signalAndWait sends sig to lab and fails unless it exits in time, with
// no stack trace on the terminal or in its stderr.
func (term *inTerminal) signalAndWait(sig syscall.Signal) {
	term.c.t.Helper()
	pid := term.labPID()
	_ = syscall.Kill(pid, sig)
	deadline := time.Now().Add(exitWithin)
	for labtest.Alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGQUIT)
			time.Sleep(time.Second)
			errText, _ := os.ReadFile(term.errFile)
			term.c.t.Fatalf("lab did not exit within %s of %v; screen:\n%s\nstderr:\n%s", exitWithin, sig, term.Screen(), errText)
		}
		time.Sleep(50 * time.Millisecond)
	}
	errText, _ := os.ReadFile(term.errFile)
	term.c.noStackTrace(term.Screen() + string(errText))
}

// processes are the living processes of this case.
func (c *labCase) processes() []int {
	var out []int
	want := []byte(markerVar + "=" + c.marker + "\x00")
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !labtest.Alive(pid) {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(env, want) {
			out = append(out, pid)
		}
	}
	return out
}

// describe names processes for a failure message.
func describe(pids []int) string {
	var parts []string
	for _, p := range pids {
		parts = append(parts, fmt.Sprintf("%d %s", p, strings.Join(proc.CommandLine(p), " ")))
	}
	return strings.Join(parts, "\n  ")
}

// noProcessesLeft fails unless every process of the case is gone within exitWithin.
func (c *labCase) noProcessesLeft() {
	c.t.Helper()
	deadline := time.Now().Add(exitWithin)
	for {
		left := c.processes()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("processes outlived lab:\n  %s", describe(left))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tempLeft lists what is left in the case's lab temp root.
func (c *labCase) tempLeft() []string {
	entries, _ := os.ReadDir(filepath.Join(c.tmp, "lab-"+strconv.Itoa(os.Getuid())))
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// noTempLeft fails if lab left a temp folder behind.
func (c *labCase) noTempLeft() {
	c.t.Helper()
	if left := c.tempLeft(); len(left) > 0 {
		c.t.Fatalf("lab left temp folders in %s: %v", c.tmp, left)
	}
	others, _ := os.ReadDir(c.tmp)
	for _, e := range others {
		if !strings.HasPrefix(e.Name(), "lab-") {
			c.t.Fatalf("lab left %s outside its temp root", filepath.Join(c.tmp, e.Name()))
		}
	}
}

// reapedByNextLab checks that a hard-killed lab left its temp folder (the
// one thing it cannot clean) and that the next lab command removes it.
func (c *labCase) reapedByNextLab() {
	c.t.Helper()
	if len(c.tempLeft()) == 0 {
		c.t.Fatal("a killed lab left no temp folder: is TMPDIR honoured?")
	}
	c.run("version")
	c.noTempLeft()
}

var stackTrace = regexp.MustCompile(`goroutine \d+ \[|panic: |\.go:\d+ \+0x`)

// noStackTrace fails if text holds a Go stack trace or panic.
func (c *labCase) noStackTrace(text string) {
	c.t.Helper()
	if stackTrace.MatchString(text) {
		c.t.Fatalf("lab printed a stack trace:\n%s", text)
	}
}

// killLeftovers ends whatever a failed case left, so one failure does not
// leak into the next case or the machine.
func (c *labCase) killLeftovers() {
	for _, pid := range c.processes() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// waitUntil polls cond until it holds, failing after timeout.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// hasProcess reports whether one of the case's processes runs a program
// whose name matches.
func (c *labCase) hasProcess(match func(name string) bool) bool {
	for _, pid := range c.processes() {
		if name := labtest.CommandName(pid); name != "" && match(name) {
			return true
		}
	}
	return false
}
