package cmd_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/operator-lab/lab/content"
	"github.com/operator-lab/lab/operator/api/v1alpha1"
)

// TestReconcileDetailInATerminal drives `lab start 3.1` in a 160×50 tmux
// terminal: the lesson's permanent-error demo creates a HelloWorld whose
// spec the operator rejects for good, enter opens that reconcile in full —
// the TerminalError's whole text, which the sequence pane has no room for,
// and what the queue did with it — and esc returns to the dashboard.
func TestReconcileDetailInATerminal(t *testing.T) {
	t.Parallel() // waits on its own control plane, like TestStartInATerminal
	s := startInTmux(t, 160, 50, "3.1 --lang en")
	s.WaitFor(3*time.Minute, "● LIVE", "Reconcile sequence", "Work queue")

	// The lesson's "Choosing a requeue strategy" demo: requeue=terminal and
	// a HelloWorld with spec.count over the limit, which the view selects.
	lesson, err := content.Load("3.1", "en")
	if err != nil {
		t.Fatal(err)
	}
	of := len(lesson.Sections)
	at := slices.IndexFunc(lesson.Sections, func(s content.Section) bool { return s.ID == "requeue-strategies" })
	if at < 0 || lesson.Sections[at].Demo == nil || lesson.Sections[at].Demo.Scenario != "permanent-error" {
		t.Fatalf("lesson 3.1 has no requeue-strategies section with the permanent-error demo")
	}
	s.Keys("L")
	s.WaitFor(30*time.Second, fmt.Sprintf("Lesson 3.1 · 1/%d", of))
	for i := 1; i <= at; i++ {
		s.Keys(">") // one key at a time: keys typed together reach the UI as one message
		s.WaitFor(30*time.Second, fmt.Sprintf("Lesson 3.1 · %d/%d", i+1, of))
	}
	s.Keys("w")
	// The demo's own create, not "TerminalError", which the lesson's text
	// holds already: a second key sent before the UI took w would reach it
	// together with w, as one message it ignores.
	s.WaitFor(time.Minute, fmt.Sprintf("(count %d > %d)", v1alpha1.MaxHelloCount+1, v1alpha1.MaxHelloCount))
	s.Keys("L") // close the lesson: the dashboard again, the invalid object selected
	dashboard := s.WaitFor(30*time.Second, "Objects · conditions", "TerminalError")
	whole := fmt.Sprintf("spec.count is %d, at most %d is supported", v1alpha1.MaxHelloCount+1, v1alpha1.MaxHelloCount)
	t.Logf("dashboard (the whole error on it: %v):\n%s", strings.Contains(dashboard, whole), dashboard)

	s.Keys("Enter")
	detail := s.WaitFor(30*time.Second, "in full", "Why it ran", "HelloWorld gen=1", "a TerminalError: not retried",
		"terminal error: "+whole, "no requeue, no Forget: terminal errors are not retried")
	t.Logf("detail:\n%s", detail)
	s.Keys("Escape")
	back := s.WaitFor(30*time.Second, "Reconcile sequence", "Work queue", "Objects · conditions")
	if strings.Contains(back, "in full") {
		t.Errorf("esc left the detail open:\n%s", back)
	}

	s.Keys("q")
	s.WaitFor(time.Minute, "LAB-EXIT=0")
}
