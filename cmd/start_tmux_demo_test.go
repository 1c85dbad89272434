package cmd_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/operator-lab/lab/content"
)

// TestLessonDemosPutTheLearnersWorldBack drives `lab start 4.4` in a
// 120×40 tmux terminal. The learner has left requeue=terminal and the
// breaker off. The external-deps demo sets what its lesson assumes and
// takes the external system down for 30 s; the multi-phase demo, started
// before that recovery, replaces it and brings the system back at once.
// When its Database has settled the learner's switches are back, and the
// external system is still healthy after the first demo's 30 s are up.
func TestLessonDemosPutTheLearnersWorldBack(t *testing.T) {
	t.Parallel() // waits on its own control plane, as TestStartInATerminal does
	s := startInTmux(t, 120, 40, "4.4 --lang en")
	s.WaitFor(3*time.Minute, "[Ready]", "● LIVE", "Reconcile sequence")

	// The learner's own switches (the header marks the one just changed ‹so›).
	s.Keys("r") // after → terminal
	s.WaitFor(10*time.Second, "requeue=‹terminal›")
	s.Keys("b") // on → off
	s.WaitFor(10*time.Second, "breaker=‹off›")

	lesson, err := content.Load("4.4", "en")
	if err != nil {
		t.Fatal(err)
	}
	of := len(lesson.Sections)
	s.Keys("L")
	s.WaitFor(30*time.Second, fmt.Sprintf("Lesson 4.4 · 1/%d", of), "press w to see this")
	// One key at a time: keys typed together reach the UI as one message.
	s.Keys(">")
	s.WaitFor(30*time.Second, fmt.Sprintf("Lesson 4.4 · 2/%d", of))
	s.Keys(">")
	s.WaitFor(30*time.Second, fmt.Sprintf("3/%d External dependencies", of))
	s.Keys("w")
	started := time.Now()
	screen := s.WaitFor(30*time.Second, "demo external-deps: set requeue=after, breaker=on, external=down",
		"▶ demo running · external healthy again in")
	t.Logf("outage demo:\n%s", screen)

	s.Keys("<")
	s.WaitFor(30*time.Second, fmt.Sprintf("Lesson 4.4 · 2/%d", of))
	s.Keys("<")
	s.WaitFor(30*time.Second, fmt.Sprintf("1/%d Multi-phase", of))
	if time.Since(started) > 25*time.Second {
		t.Fatalf("reached the second demo %s after the first: too late to start it before the recovery", time.Since(started).Round(time.Second))
	}
	s.Keys("w")
	screen = s.WaitFor(30*time.Second, "demo multi-phase: replaces demo external-deps; set external=healthy")
	t.Logf("second demo:\n%s", screen)

	screen = s.WaitFor(time.Minute, "demo multi-phase over: put back your requeue=terminal, breaker=off")
	t.Logf("over:\n%s", screen)
	learners := regexp.MustCompile(`requeue=‹?terminal›?\s+backoff=lesson\s+breaker=‹?off›?\s+ratelimit=on\s+external=healthy\s`)
	s.WaitForMatch(10*time.Second, learners)

	// Past the first demo's promised recovery: nothing changed the world since.
	time.Sleep(time.Until(started.Add(35 * time.Second)))
	if screen := s.Screen(); !learners.MatchString(screen) || strings.Contains(screen, "demo running") {
		t.Fatalf("after the first demo's 30 s:\n%s", screen)
	}

	s.Keys("q")
	s.WaitFor(time.Minute, "LAB-EXIT=0")
}
