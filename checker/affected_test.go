package checker_test

import (
	"slices"
	"testing"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/checker/checkertest"
	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/labs"
)

// TestAffectedFollowsImports: a save re-checks the exercises whose code
// or checks reach the changed package, and only those.
func TestAffectedFollowsImports(t *testing.T) {
	lab := checkertest.Lab(t, "4.4")
	dir := labtest.Workspace(t, lab, false, map[string]string{
		// A package of the learner's own that the breaker now uses.
		"breaker/clock.go":   "package breaker\n\nimport _ \"example.com/lab44/mytime\"\n",
		"mytime/mytime.go":   "package mytime\n",
		"scratch/scratch.go": "package scratch\n",
	})
	ids := func(es []*labs.Exercise) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.ID)
		}
		slices.Sort(out)
		return out
	}
	all := ids(lab.Exercises)
	cases := []struct {
		name    string
		changed []string
		want    []string
	}{
		{"its own package, and the exercise that builds on it", []string{"backoff/backoff.go"}, []string{"backoff", "together"}},
		{"a package only one exercise imports", []string{"statemachine/machine.go"}, []string{"statemachine"}},
		{"the learner's package, through the one importing it", []string{"mytime/mytime.go"}, []string{"breaker", "together"}},
		{"the API, read by all but the breaker (plain Go)", []string{"api/v1alpha1/types.go"},
			slices.DeleteFunc(slices.Clone(all), func(id string) bool { return id == "breaker" })},
		{"go.mod", []string{"go.mod"}, all},
		{"anything", []string{"."}, all},
		{"a package nothing imports", []string{"scratch/scratch.go"}, nil},
		{"the learner's own test", []string{"backoff/backoff_test.go"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ids(checker.Affected(lab, dir, c.changed, lab.Exercises)); !slices.Equal(got, c.want) {
				t.Errorf("Affected(%v) = %v, want %v", c.changed, got, c.want)
			}
		})
	}
}
