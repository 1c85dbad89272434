package checker

import (
	"slices"
	"testing"

	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/labs"
)

// TestReadmeRightsAreTheChecks: the ClusterRoles the README asks a
// cluster admin for grant every right lab check's preflight asks about,
// for both labs, and nothing else.
func TestReadmeRightsAreTheChecks(t *testing.T) {
	type grant struct{ group, resource, verb string }
	granted := map[grant]bool{}
	for _, role := range labtest.ReadmeRoles(t) {
		for _, r := range role.Rules {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						granted[grant{g, res, v}] = true
					}
				}
			}
		}
	}
	needed := map[grant]bool{}
	for _, id := range []string{"3.1", "4.4"} {
		lab, err := labs.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		rights, err := NeededRights(lab)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rights {
			for _, v := range r.Verbs {
				needed[grant{r.Group, r.Resource, v}] = true
			}
		}
	}
	var missing, extra []string
	for g := range needed {
		if !granted[g] {
			missing = append(missing, g.verb+" "+g.resource+"."+g.group)
		}
	}
	for g := range granted {
		if !needed[g] {
			extra = append(extra, g.verb+" "+g.resource+"."+g.group)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	if len(missing) > 0 || len(extra) > 0 {
		t.Errorf("the README's roles lack %v and grant %v beyond what the checks need", missing, extra)
	}
}
