package checker

import (
	"fmt"
	"strings"
	"testing"

	"github.com/operator-lab/lab/labs/workspace"
)

// TestReportHintIsTheOneCounted: beside a failure the report reminds of
// the last hint lab hint showed (or shows the first), never a further one,
// and records it as shown, so lab list's count is the hint lab check
// printed.
func TestReportHintIsTheOneCounted(t *testing.T) {
	lab, e := fixtureLab(t)
	total := len(e.Hints.In("en"))
	if total < 3 {
		t.Fatalf("exercise %s has %d hints; the test needs 3", e.ID, total)
	}
	report := &Report{Lab: lab, Results: []*Result{{Exercise: e, Status: StatusFail, Reason: "expected this, saw that"}}}
	for _, c := range []struct {
		shown, printed int
		next           bool
	}{{0, 1, true}, {2, 2, true}, {total, total, false}} {
		progress := workspace.NewProgress(lab.ID)
		progress.Exercise(e.ID).HintsShown = c.shown
		var out strings.Builder
		if err := report.WriteHuman(&out, HumanOptions{Lang: "en", Progress: progress}); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("hint %d/%d", c.printed, total)
		if !strings.Contains(out.String(), want) || strings.Count(out.String(), "hint ") != 1 {
			t.Errorf("%d shown: the report does not print %s alone:\n%s", c.shown, want, out.String())
		}
		if got := progress.Exercises[e.ID].HintsShown; got != c.printed {
			t.Errorf("%d shown: after the report printed %s, %d count as shown (lab list says %d/%d)", c.shown, want, got, got, total)
		}
		if c.next != strings.Contains(out.String(), "lab hint: the next one") {
			t.Errorf("%d shown: the pointer to lab hint is wrong:\n%s", c.shown, out.String())
		}
	}
}

// TestReportInRussian: the report's own words follow the language, as the
// exercise titles and hints do.
func TestReportInRussian(t *testing.T) {
	lab, e := fixtureLab(t)
	report := &Report{Lab: lab, Results: []*Result{{Exercise: e, Status: StatusFail, Reason: "expected this, saw that"}}}
	var out strings.Builder
	if err := report.WriteHuman(&out, HumanOptions{Lang: "ru", Progress: workspace.NewProgress(lab.ID)}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"не пройдено", fmt.Sprintf("подсказка 1/%d (lab hint — следующая): %s", len(e.Hints.In("ru")), e.Hints.In("ru")[0]), "Пройдено 0 из 1 за"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the Russian report lacks %q:\n%s", want, out.String())
		}
	}
	for _, english := range []string{"failed", "hint 1/", "passed in"} {
		if strings.Contains(out.String(), english) {
			t.Errorf("the Russian report says %q:\n%s", english, out.String())
		}
	}
}
