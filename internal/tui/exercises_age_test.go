package tui

import (
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// TestExercisesCreatedAgeFollowsTheClock: the workspace this start
// created is said to be as old as it is, at every render — not "now" ten
// minutes later, and not younger when the progress file changes.
func TestExercisesCreatedAgeFollowsTheClock(t *testing.T) {
	for _, c := range []struct{ lang, now, later string }{
		{"en", "created just now", "created 10m ago"},
		{"ru", "создана только что", "создана 10 мин назад"},
	} {
		clock := clocktesting.NewFakePassiveClock(t0)
		m := newWorkspaceModel(120, 40, clock, "3.1", c.lang, lab31Exercises())
		m, _ = press(m, "x")
		if layer := exercisesFrame(t, m.View()); !strings.Contains(layer, c.now) {
			t.Errorf("%s at start: the layer lacks %q:\n%s", c.lang, c.now, layer)
		}
		clock.SetTime(t0.Add(10 * time.Minute))
		m = update(m, withStatus(lab31Exercises(), "results", "pass", clock.Now())) // a check, ten minutes on
		if layer := exercisesFrame(t, m.View()); !strings.Contains(layer, c.later) {
			t.Errorf("%s ten minutes later: the layer lacks %q:\n%s", c.lang, c.later, layer)
		}
	}
}
