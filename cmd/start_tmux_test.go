package cmd_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/operator-lab/lab/content"
	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/workspace"
)

// startInTmux runs `lab start ARGS` in a width×height tmux terminal, with
// its own state folder and a new workspace; when lab exits, the pane
// shows LAB-EXIT=<its exit status> and stays for the test to read.
func startInTmux(t *testing.T, width, height int, args string) *labtest.Tmux {
	t.Helper()
	// No background build of the checks: the tmux server's environment
	// need not be this test binary's.
	command := fmt.Sprintf("env LAB_STATE_DIR=%s %s=off %s start %s --dir %s; echo LAB-EXIT=$?; sleep 600",
		t.TempDir(), workspace.BackgroundBuildEnv, labBinary(t), args, filepath.Join(t.TempDir(), "ws"))
	return labtest.NewTmux(t, width, height, command)
}

// TestStartInATerminal drives `lab start 4.4` in a 120×40 tmux terminal:
// the sample Database reaches Ready on screen, the requeue switch changes,
// the gate pauses and steps one reconcile, the lesson pane opens and runs a
// section's demo on the operator, x lists the exercises of the workspace it
// created, q quits — and no etcd or kube-apiserver is left behind.
func TestStartInATerminal(t *testing.T) {
	t.Parallel() // waits on its own control plane; the serial tests (env, process checks) run first
	s := startInTmux(t, 120, 40, "4.4 --lang en --set timescale=10")

	s.WaitFor(2*time.Minute, "Starting your lab")
	screen := s.WaitFor(3*time.Minute, "[Ready]", "Ready=True", "● LIVE", "Reconcile sequence", "Work queue")
	t.Logf("Ready:\n%s", screen)

	var held []int
	for _, pid := range labtest.Descendants(s.PanePID()) {
		if name := labtest.CommandName(pid); name == "etcd" || name == "kube-apiserver" {
			held = append(held, pid)
		}
	}
	if len(held) != 2 {
		t.Fatalf("lab start runs %d control-plane processes (%v), want etcd and kube-apiserver", len(held), held)
	}

	// requeue=after (the default) → terminal: shown in the header, explained in the status line.
	s.Keys("r")
	s.WaitFor(10*time.Second, "requeue=‹terminal›", "TerminalError")

	// Pause, create an object: its reconcile waits at the gate while the queue shows it.
	s.Keys("p")
	s.WaitFor(10*time.Second, "PAUSED")
	s.Keys("c")
	s.WaitFor(30*time.Second, "next: orders-2", "held at the gate")
	s.Keys("s")
	screen = s.WaitForMatch(30*time.Second, regexp.MustCompile(`#\d+ orders-2 · (success|requeue_after|requeue|error|terminal) in`))
	t.Logf("after one step:\n%s", screen)

	// The lesson: L opens it, > twice goes to "External dependencies", w runs
	// its demo — requeue=after, the external system down, a new Database
	// (orders-3) — which then comes back healthy (3s at timescale 10).
	s.Keys("p") // resume first, so the demo's object is reconciled
	s.WaitFor(10*time.Second, "● LIVE")
	s.Keys("L")
	lesson, err := content.Load("4.4", "en")
	if err != nil {
		t.Fatal(err)
	}
	of := len(lesson.Sections)
	s.WaitFor(30*time.Second, fmt.Sprintf("Lesson 4.4 · 1/%d", of), "press w to see this")
	// One key at a time: keys typed together reach the UI as one message.
	s.Keys(">")
	s.WaitFor(30*time.Second, fmt.Sprintf("Lesson 4.4 · 2/%d", of))
	s.Keys(">")
	s.WaitFor(30*time.Second, fmt.Sprintf("3/%d External dependencies", of), "scenario external-outage, requeue=after")
	s.Keys("w")
	screen = s.WaitForMatch(30*time.Second, regexp.MustCompile(`demo external-deps: set requeue=after, external=down|external system is healthy again`))
	t.Logf("demo:\n%s", screen)
	s.WaitFor(time.Minute, "orders-3", "external=healthy")

	// The exercises of the workspace lab start created, with the progress.
	s.Keys("x")
	lab, err := labs.Get("4.4")
	if err != nil {
		t.Fatal(err)
	}
	s.WaitFor(30*time.Second, "Exercises", fmt.Sprintf("0/%d passed", len(lab.Exercises)), "1. State machine", "next ▸")

	s.Keys("q")
	s.WaitFor(time.Minute, "LAB-EXIT=0")
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
