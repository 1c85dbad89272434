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
			for _, set := range s.Demo.Settings() {
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

// TestEveryDemoSetsWhatItsLessonAssumes: a demo sets each switch its
// lesson's text takes for granted, once — its own value where it is about
// that switch, else the default — so the live view's demo tells the
// section's story whatever the learner left on.
func TestEveryDemoSetsWhatItsLessonAssumes(t *testing.T) {
	assumes := map[string][]string{
		"3.1": {switches.NameRequeue, switches.NameExternal},
		"4.4": {switches.NameRequeue, switches.NameBackoff, switches.NameBreaker, switches.NameRateLimit, switches.NameExternal},
	}
	defaults := switches.Defaults()
	for _, id := range content.LessonIDs() {
		lesson, err := content.Load(id, content.English)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range lesson.Sections {
			if s.Demo == nil {
				continue
			}
			set := map[string]int{}
			for _, sw := range s.Demo.Settings() {
				set[sw.Name]++
			}
			for _, sw := range s.Demo.Assumed {
				if want, _ := defaults.Get(sw.Name); sw.Value != want {
					t.Errorf("%s/%s assumes %s=%s, the default is %s", id, s.ID, sw.Name, sw.Value, want)
				}
			}
			for _, name := range assumes[id] {
				if set[name] != 1 {
					t.Errorf("%s/%s sets %s %d times: %v", id, s.ID, name, set[name], s.Demo.Settings())
				}
			}
		}
	}
}
