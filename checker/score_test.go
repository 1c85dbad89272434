package checker

import (
	"strings"
	"testing"

	"github.com/operator-lab/lab/labs"
)

// TestScoreFollowsThePoints: a passed exercise earns all it is worth, a
// failed or broken one nothing; a workspace's points replace the lab's; the
// human report and JUnit say so per exercise and in all.
func TestScoreFollowsThePoints(t *testing.T) {
	lab, err := labs.Get("4.4")
	if err != nil {
		t.Fatal(err)
	}
	ex := func(id string) *labs.Exercise {
		e, err := lab.Exercise(id)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	report := &Report{Lab: lab, Results: []*Result{
		{Exercise: ex("statemachine"), Status: StatusPass},
		{Exercise: ex("dependency"), Status: StatusFail, Reason: "expected this, saw that"},
		{Exercise: ex("breaker"), Status: StatusPass},
		{Exercise: ex("together"), Status: StatusError, Reason: "does not compile"},
	}}
	score(report.Results, map[string]int{"breaker": 30})
	want := []struct{ points, score int }{{ex("statemachine").Points, ex("statemachine").Points}, {ex("dependency").Points, 0}, {30, 30}, {ex("together").Points, 0}}
	earned, possible := 0, 0
	for i, w := range want {
		r := report.Results[i]
		if r.Points != w.points || r.Score != w.score {
			t.Errorf("%s (%s): %d of %d points, want %d of %d", r.Exercise.ID, r.Status, r.Score, r.Points, w.score, w.points)
		}
		earned, possible = earned+w.score, possible+w.points
	}
	if e, p := report.Score(); e != earned || p != possible {
		t.Errorf("Score() = %d of %d, want %d of %d", e, p, earned, possible)
	}

	var human strings.Builder
	if err := report.WriteHuman(&human, HumanOptions{Lang: "en"}); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"· 30/30 points", "· 0/10 points", "Score: 45 of 75 points."} {
		if !strings.Contains(human.String(), line) {
			t.Errorf("the report lacks %q:\n%s", line, human.String())
		}
	}
	var junit strings.Builder
	if err := report.WriteJUnit(&junit); err != nil {
		t.Fatal(err)
	}
	for _, fragment := range []string{
		`<testsuites name="lab 4.4" tests="4" failures="1" errors="1" time="0">
  <properties>
    <property name="score" value="45"></property>
    <property name="points" value="75"></property>`,
		`<testsuite name="4.4/breaker" tests="1" failures="0" errors="0" time="0">
    <properties>
      <property name="score" value="30"></property>
      <property name="points" value="30"></property>`,
	} {
		if !strings.Contains(junit.String(), fragment) {
			t.Errorf("the JUnit XML lacks\n%s\nin\n%s", fragment, junit.String())
		}
	}
}
