package content_test

import (
	"testing"

	"github.com/operator-lab/lab/content"
	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator/scenario"
	"github.com/operator-lab/lab/operator/switches"
)

// TestDemosExistOnTheOperator: every "press r to see this" names a scenario
// and switch settings the reference operator really has, so the TUI and
// `lab run` can show it.
func TestDemosExistOnTheOperator(t *testing.T) {
	demos := 0
	for _, id := range content.LessonIDs() {
		lesson, err := content.Load(id, content.English)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range lesson.Sections {
			if s.Demo == nil {
				continue
			}
			demos++
			if s.Demo.Scenario != "" {
				if _, err := scenario.Get(s.Demo.Lab, s.Demo.Scenario); err != nil {
					t.Errorf("lesson %s section %s: %v", id, s.ID, err)
				}
			}
			sw := switches.NewForLab(s.Demo.Lab, observe.Discard)
			for _, set := range s.Demo.Switches {
				if err := sw.Set(set.Name, set.Value); err != nil {
					t.Errorf("lesson %s section %s: switch %s=%s: %v", id, s.ID, set.Name, set.Value, err)
				}
			}
		}
	}
	if demos == 0 {
		t.Fatal("no section has a demo")
	}
}
