package cmd

import (
	"testing"

	"github.com/operator-lab/lab/observe"
)

// TestReplayReadsTheSessionEvent: a trace's session event names its lab
// and namespace; only traces without one are guessed from object kinds.
func TestReplayReadsTheSessionEvent(t *testing.T) {
	events := []observe.Event{
		{Kind: observe.KindSession, Lab: "4.4", Namespace: "lab-run-abc"},
		{Kind: observe.KindWatch, Object: "HelloWorld", Key: "elsewhere/x"},
	}
	if lab, ns := traceLab(events), traceNamespace(events); lab != "4.4" || ns != "lab-run-abc" {
		t.Errorf("with a session event: lab %q, namespace %q; want 4.4, lab-run-abc", lab, ns)
	}
	old := events[1:]
	if lab, ns := traceLab(old), traceNamespace(old); lab != "3.1" || ns != "elsewhere" {
		t.Errorf("an older trace: lab %q, namespace %q; want the guess 3.1, elsewhere", lab, ns)
	}
}
