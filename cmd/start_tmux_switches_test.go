package cmd_test

import (
	"strings"
	"testing"
	"time"
)

// TestStartOffersOnlyTheSwitchesTheLabReads drives `lab start 3.1` in a
// 120×40 tmux terminal. Lab 3.1's HelloWorld controller calls its
// dependency directly, through no circuit breaker, rate limiter or lesson
// backoff: the screen draws none of them, neither the header, the footer
// nor the help offers their switches, and pressing b says the breaker
// belongs to lab 4.4 — it does not claim to have changed anything.
func TestStartOffersOnlyTheSwitchesTheLabReads(t *testing.T) {
	t.Parallel() // waits on its own control plane; the serial tests (env, process checks) run first
	s := startInTmux(t, 120, 40, "3.1 --lang en")

	s.WaitFor(2*time.Minute, "Starting your lab")
	screen := s.WaitFor(3*time.Minute, "● LIVE", "HelloWorld  last: success", "Reconcile sequence", "External system")
	t.Logf("Ready:\n%s", screen)
	notShown := func(screen, when string, texts ...string) {
		t.Helper()
		for _, text := range texts {
			if strings.Contains(screen, text) {
				t.Errorf("%s, lab 3.1's screen shows %q:\n%s", when, text, screen)
			}
		}
	}
	// The patterns lab 3.1 lacks, their switches in the header and the
	// footer, and 4.4's phases.
	notShown(screen, "at start", "Circuit breaker", "Rate limiter", "breaker=", "ratelimit=", "backoff=",
		"b breaker", "state machine", "no phase reported yet", "lesson backoff")

	s.Keys("b")
	screen = s.WaitFor(10*time.Second, "b does nothing here: switch breaker belongs to lab 4.4")
	notShown(screen, "after b", "breaker →", "Circuit breaker", "breaker=")

	s.Keys("?")
	screen = s.WaitFor(10*time.Second, "requeue: error → requeue → after → terminal")
	notShown(screen, "in the help", "circuit breaker on/off", "rate limiter on/off", "backoff: rate limiter or lesson")
	// q quits from the help too (as it says). Closing it first with a
	// second ? would race: keys typed together reach the UI as one message.
	s.Keys("q")
	s.WaitFor(time.Minute, "LAB-EXIT=0")
}
