package workspace_test

import (
	"testing"

	"github.com/operator-lab/lab/labs/workspace"
)

// TestCheckHintRemindsAndCounts: lab check prints the last hint shown (or
// the first), never one further; whatever printed a hint counts it once,
// so lab list says what lab check printed.
func TestCheckHintRemindsAndCounts(t *testing.T) {
	var none *workspace.ExerciseProgress
	if got := none.CheckHint(3); got != 0 {
		t.Errorf("no progress: check hint %d, want the first", got)
	}
	for shown, want := range map[int]int{0: 0, 1: 0, 2: 1, 3: 2, 99: 2} {
		if got := (&workspace.ExerciseProgress{HintsShown: shown}).CheckHint(3); got != want {
			t.Errorf("%d shown: check hint %d, want %d", shown, got, want)
		}
	}
	p := workspace.NewProgress("3.1")
	e := p.Exercise("manager")
	e.ShowHint(e.NextHint(3)) // lab hint: 1/3
	e.ShowHint(e.NextHint(3)) // lab hint: 2/3
	i := e.CheckHint(3)       // lab check beside a failure
	e.ShowHint(i)
	if i != 1 || e.HintsShown != 2 {
		t.Errorf("after two lab hints, lab check printed hint %d/3 and %d count as shown; want 2/3 and 2", i+1, e.HintsShown)
	}
	fresh := p.Exercise("basics")
	fresh.ShowHint(fresh.CheckHint(3))
	if fresh.HintsShown != 1 {
		t.Errorf("a check showing the first hint counts %d shown, want 1", fresh.HintsShown)
	}
}
