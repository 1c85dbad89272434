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
// 120×40 tmux terminal. The learner has left requeue=terminal, the
// breaker off and the timescale at 0.5, so the external-deps demo's
// outage lasts 60 s: the demo sets what its lesson assumes and takes the
// external system down; the multi-phase demo, started before that
// recovery, replaces it and brings the system back at once. When its
// Database has settled the learner's switches are back. That the first
// demo's recovery does not come later is the fake clock's to show
// (internal/tui TestAnotherDemoBeforeTheRecoveryPutsTheWorldBack): here
// nothing waits for a time.
func TestLessonDemosPutTheLearnersWorldBack(t *testing.T) {
	t.Parallel() // waits on its own control plane, as TestStartInATerminal does
	s := startInTmux(t, 120, 40, "4.4 --lang en")
	s.WaitFor(3*time.Minute, "[Ready]", "● LIVE", "Reconcile sequence")

	// The learner's own switches (the header marks the one just changed ‹so›).
	s.Keys("r") // after → terminal
	s.WaitFor(10*time.Second, "requeue=‹terminal›")
	s.Keys("b") // on → off
	s.WaitFor(10*time.Second, "breaker=‹off›")
	s.Keys("-") // 1 → 0.5: the outage demo's 30 s become 60 s
	s.WaitFor(10*time.Second, "timescale=‹0.5×›")

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
	screen := s.WaitFor(30*time.Second, "demo external-deps: set requeue=after, breaker=on, external=down",
		"external healthy again in 1m", "▶ demo running")
	t.Logf("outage demo:\n%s", screen)

	s.Keys("<")
	s.WaitFor(30*time.Second, fmt.Sprintf("Lesson 4.4 · 2/%d", of))
	s.Keys("<")
	s.WaitFor(30*time.Second, fmt.Sprintf("1/%d Multi-phase", of))
	s.Keys("w")
	// "replaces demo external-deps" is the evidence that the outage was
	// still on: a recovered outage demo would have ended.
	screen = s.WaitFor(30*time.Second, "demo multi-phase: replaces demo external-deps; set external=healthy")
	t.Logf("second demo:\n%s", screen)

	screen = s.WaitFor(2*time.Minute, "demo multi-phase over: put back your requeue=terminal, breaker=off")
	t.Logf("over:\n%s", screen)
	learners := regexp.MustCompile(`requeue=‹?terminal›?\s+backoff=lesson\s+breaker=‹?off›?\s+ratelimit=on\s+external=healthy\s`)
	screen = s.WaitForMatch(10*time.Second, learners)
	if strings.Contains(screen, "demo running") || !regexp.MustCompile(`timescale=‹?0\.5×`).MatchString(screen) {
		t.Fatalf("after both demos, one still runs or the timescale is not the learner's 0.5:\n%s", screen)
	}

	s.Keys("q")
	s.WaitFor(time.Minute, "LAB-EXIT=0")
}
