package v1alpha1

import (
	"slices"
	"testing"
)

// TestEveryPhaseHasAWayOn: each phase other than Ready can be left, each
// can be reached from the empty phase, and nothing leads to the empty phase.
func TestEveryPhaseHasAWayOn(t *testing.T) {
	reached := map[Phase]bool{"": true}
	for changed := true; changed; {
		changed = false
		for from := range reached {
			for _, to := range NextPhases(from) {
				if !reached[to] {
					reached[to], changed = true, true
				}
			}
		}
	}
	for _, p := range Phases() {
		if !reached[p] {
			t.Errorf("phase %s cannot be reached", p)
		}
		if len(NextPhases(p)) == 0 {
			t.Errorf("phase %s has no way on", p)
		}
		if CanTransition(p, "") {
			t.Errorf("%s → (empty) is allowed", p)
		}
	}
	if !CanTransition(PhaseFailed, PhaseProvisioning) || CanTransition(PhaseFailed, PhasePending) || !CanTransition(PhaseUpdating, PhaseVerifying) {
		t.Error("the retry or update edges are not the ones the lesson teaches")
	}
	if got := Phases(); len(got) != 8 || slices.Contains(got, "") {
		t.Errorf("Phases() = %v", got)
	}
}
