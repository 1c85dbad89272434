package cmd_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/operator-lab/lab/internal/labtest"
)

// tmuxSession drives a real terminal: the lab binary in a detached tmux
// session of a fixed size, read back with capture-pane.
type tmuxSession struct {
	t    *testing.T
	name string
}

func newTmuxSession(t *testing.T, width, height int, command string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is not installed: `make test` installs it (or: apt-get install -y tmux)")
	}
	s := &tmuxSession{t: t, name: fmt.Sprintf("labtest-%d-%d", os.Getpid(), time.Now().UnixNano())}
	s.tmux("new-session", "-d", "-s", s.name, "-x", strconv.Itoa(width), "-y", strconv.Itoa(height), command)
	t.Cleanup(func() { _ = exec.Command("tmux", "kill-session", "-t", s.name).Run() })
	return s
}

func (s *tmuxSession) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", args...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (s *tmuxSession) screen() string { return s.tmux("capture-pane", "-p", "-t", s.name) }

func (s *tmuxSession) keys(keys ...string) {
	s.tmux(append([]string{"send-keys", "-t", s.name}, keys...)...)
}

// waitFor polls the screen until every want is on it.
func (s *tmuxSession) waitFor(timeout time.Duration, want ...string) string {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		screen := s.screen()
		missing := ""
		for _, w := range want {
			if !strings.Contains(screen, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return screen
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("after %s the screen still lacks %q:\n%s", timeout, missing, screen)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitForMatch polls the screen until re matches it.
func (s *tmuxSession) waitForMatch(timeout time.Duration, re *regexp.Regexp) string {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		screen := s.screen()
		if re.MatchString(screen) {
			return screen
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("after %s the screen still does not match %s:\n%s", timeout, re, screen)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (s *tmuxSession) panePID() int {
	pid, err := strconv.Atoi(strings.TrimSpace(s.tmux("display-message", "-p", "-t", s.name, "#{pane_pid}")))
	if err != nil {
		s.t.Fatal(err)
	}
	return pid
}

// TestStartInATerminal drives `lab start 4.4` in a 120×40 tmux terminal:
// the sample Database reaches Ready on screen, the requeue switch changes,
// the gate pauses and steps one reconcile, the lesson pane opens and runs a
// section's demo on the operator, x lists the exercises of the workspace it
// created, q quits — and no etcd or kube-apiserver is left behind.
func TestStartInATerminal(t *testing.T) {
	bin := labBinary(t)
	ws := filepath.Join(t.TempDir(), "ws")
	command := fmt.Sprintf("env LAB_STATE_DIR=%s %s start 4.4 --lang en --set timescale=10 --dir %s; echo LAB-EXIT=$?; sleep 600",
		t.TempDir(), bin, ws)
	s := newTmuxSession(t, 120, 40, command)

	s.waitFor(2*time.Minute, "Starting your lab")
	screen := s.waitFor(3*time.Minute, "[Ready]", "Ready=True", "● LIVE", "Reconcile sequence", "Work queue")
	t.Logf("Ready:\n%s", screen)

	var held []int
	for _, pid := range labtest.Descendants(s.panePID()) {
		if name := labtest.CommandName(pid); name == "etcd" || name == "kube-apiserver" {
			held = append(held, pid)
		}
	}
	if len(held) != 2 {
		t.Fatalf("lab start runs %d control-plane processes (%v), want etcd and kube-apiserver", len(held), held)
	}

	// requeue=after (the default) → terminal: shown in the header, explained in the status line.
	s.keys("r")
	s.waitFor(10*time.Second, "requeue=‹terminal›", "TerminalError")

	// Pause, create an object: its reconcile waits at the gate while the queue shows it.
	s.keys("p")
	s.waitFor(10*time.Second, "PAUSED")
	s.keys("c")
	s.waitFor(30*time.Second, "next: orders-2", "held at the gate")
	s.keys("s")
	screen = s.waitForMatch(30*time.Second, regexp.MustCompile(`#\d+ orders-2 · (success|requeue_after|requeue|error|terminal) in`))
	t.Logf("after one step:\n%s", screen)

	// The lesson: L opens it, > twice goes to "External dependencies", w runs
	// its demo — requeue=after, the external system down, a new Database
	// (orders-3) — which then comes back healthy (3s at timescale 10).
	s.keys("p") // resume first, so the demo's object is reconciled
	s.waitFor(10*time.Second, "● LIVE")
	s.keys("L")
	s.waitFor(30*time.Second, "Lesson 4.4 · 1/9", "press w to see this")
	// One key at a time: keys typed together reach the UI as one message.
	s.keys(">")
	s.waitFor(30*time.Second, "Lesson 4.4 · 2/9")
	s.keys(">")
	s.waitFor(30*time.Second, "3/9 External dependencies", "scenario external-outage, requeue=after")
	s.keys("w")
	screen = s.waitForMatch(30*time.Second, regexp.MustCompile(`demo external-deps: requeue=after, external=down|external system is healthy again`))
	t.Logf("demo:\n%s", screen)
	s.waitFor(time.Minute, "orders-3", "external=healthy")

	// The exercises of the workspace lab start created, with the progress.
	s.keys("x")
	s.waitFor(30*time.Second, "Exercises", "0/7 passed", "1. State machine", "next ▸")

	s.keys("q")
	s.waitFor(time.Minute, "LAB-EXIT=0")
	deadline := time.Now().Add(30 * time.Second)
	for _, pid := range held {
		for labtest.Alive(pid) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if labtest.Alive(pid) {
			t.Errorf("%s (pid %d) outlived lab start", labtest.CommandName(pid), pid)
		}
	}
}
