package checker

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/operator-lab/lab/labs"
)

// Right is a permission the checks need on a cluster lab did not start.
type Right struct {
	Group, Resource string // Group "" is the core group
	Verbs           []string
	// Cluster says the resource is cluster-scoped; the others are needed
	// in every namespace, as the checks make theirs as they run.
	Cluster bool
}

var (
	readWrite = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
	makeKeep  = []string{"get", "list", "watch", "create", "delete"}
)

// NeededRights are the rights lab check needs on a shared cluster for
// lab: the lab's CRDs (to read them, and to install them where absent),
// namespaces (each check makes its own), and in them the kinds the checks
// and the learner's code use (the learner's own manager in exercise
// manager of lab 3.1 included: its confinement to its namespace takes no
// rights, see cluster.ConfinedConfig).
func NeededRights(lab *labs.Lab) ([]Right, error) {
	rights := []Right{
		{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Verbs: []string{"get", "create"}, Cluster: true},
		{Resource: "namespaces", Verbs: makeKeep, Cluster: true},
	}
	crds, err := lab.CustomResourceDefinitions()
	if err != nil {
		return nil, err
	}
	for _, crd := range crds {
		plural := crd.Spec.Names.Plural
		rights = append(rights,
			Right{Group: crd.Spec.Group, Resource: plural, Verbs: readWrite},
			Right{Group: crd.Spec.Group, Resource: plural + "/status", Verbs: []string{"get", "update", "patch"}})
	}
	rights = append(rights,
		Right{Resource: "configmaps", Verbs: readWrite},
		Right{Resource: "secrets", Verbs: readWrite},
		Right{Resource: "events", Verbs: readWrite},
		Right{Group: "events.k8s.io", Resource: "events", Verbs: readWrite},
		Right{Group: "coordination.k8s.io", Resource: "leases", Verbs: readWrite},
		Right{Group: "apps", Resource: "statefulsets", Verbs: readWrite},
	)
	return rights, nil
}

// MissingRightsError lists the rights the credentials lack.
type MissingRightsError struct {
	Host    string
	Missing []string
}

func (e *MissingRightsError) Error() string {
	return fmt.Sprintf("your credentials on %s lack what lab check needs: %s (the README's \"Grading on a shared cluster\" has the ClusterRoles to ask for)",
		e.Host, strings.Join(e.Missing, "; "))
}

// CheckRights asks the cluster behind cfg whether its credentials have
// every right checking lab's exercises needs (SelfSubjectAccessReview), and
// returns a *MissingRightsError naming each one they lack.
func CheckRights(ctx context.Context, cfg *rest.Config, lab *labs.Lab) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("connect to the cluster: %w", err)
	}
	type ask struct {
		right Right
		verb  string
	}
	rights, err := NeededRights(lab)
	if err != nil {
		return err
	}
	var asks []ask
	for _, r := range rights {
		for _, v := range r.Verbs {
			asks = append(asks, ask{r, v})
		}
	}
	var (
		mu      sync.Mutex
		missing = map[string][]string{} // what → verbs
		errs    []error
		wg      sync.WaitGroup
	)
	for _, a := range asks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resource, sub, _ := strings.Cut(a.right.Resource, "/")
			review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
				ResourceAttributes: &authorizationv1.ResourceAttributes{Group: a.right.Group, Resource: resource, Subresource: sub, Verb: a.verb},
			}}
			got, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				errs = append(errs, err)
			case !got.Status.Allowed:
				what := a.right.describe()
				missing[what] = append(missing[what], a.verb)
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return fmt.Errorf("ask %s what your credentials may do: %w", cfg.Host, errs[0])
	}
	if len(missing) == 0 {
		return nil
	}
	var lines []string
	for _, what := range slices.Sorted(maps.Keys(missing)) {
		verbs := missing[what]
		slices.Sort(verbs)
		lines = append(lines, strings.Join(verbs, ", ")+" "+what)
	}
	return &MissingRightsError{Host: cfg.Host, Missing: lines}
}

// describe names the right's resource as kubectl would, and where.
func (r Right) describe() string {
	name := r.Resource
	if r.Group != "" {
		name += "." + r.Group
	}
	if !r.Cluster {
		name += " (in every namespace)"
	}
	return name
}
