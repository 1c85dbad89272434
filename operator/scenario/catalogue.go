package scenario

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator-lab/lab/internal/l10n"
	"github.com/operator-lab/lab/operator/api/v1alpha1"
	"github.com/operator-lab/lab/operator/switches"
)

const (
	lab31 = "3.1"
	lab44 = "4.4"
)

// outage is how long the outage scenarios keep the external system broken,
// in operator time: long enough for several retries (the lesson backoff
// waits 5 s, 10 s, 20 s) and, with the default backoff, for the breaker to open.
const outage = 30 * time.Second

// check is a state of an object the operator is expected to reach.
type check struct {
	what string
	ok   func(client.Object) bool
}

// kind is what the scenarios need to know of a lab's objects: the names a
// headless run gives them, and how to tell the operator's answers.
type kind struct {
	samples repairer
	// ghost is the object created and at once deleted; invalid the one
	// with a spec the operator rejects; trio the three of flaky-external.
	ghost, invalid string
	trio           [3]string
	// ready is Ready reported for at least generation.
	ready     func(obj client.Object, generation int64) bool
	readyWhat string
	// rejected is the answer to an invalid spec, broken to an outage.
	rejected, broken check
	// summaries of the scenarios, by name.
	summaries map[string]string
}

var database = &kind{
	samples: databaseSamples{}, ghost: "ghost", invalid: "orders", trio: [3]string{"orders", "billing", "ledger"},
	ready: func(obj client.Object, generation int64) bool {
		db := obj.(*v1alpha1.Database)
		return db.Status.Phase == v1alpha1.PhaseReady && db.Status.ObservedGeneration >= generation
	},
	readyWhat: "phase Ready",
	rejected:  phase(v1alpha1.PhaseFailed),
	broken:    phase(v1alpha1.PhaseFailed),
	summaries: map[string]string{
		"create":          "create a Database and follow it through every phase to Ready",
		"update-burst":    "change a Ready Database five times in a row: Updating once the queue merges the events",
		"delete":          "delete a Ready Database: its finalizer holds it until the external database is deprovisioned",
		"not-found":       "create and at once delete a Database: the queued request meets a NotFound",
		"permanent-error": `storage "lots" is not a quantity: Failed with a TerminalError until the spec is fixed`,
		"external-outage": "the external system goes down while a Database is created, then comes back",
		"flaky-external":  "the external system fails some calls while three Databases are created",
	},
}

var hello = &kind{
	samples: helloSamples{}, ghost: "ghost", invalid: "too-loud", trio: [3]string{"hello-a", "hello-b", "hello-c"},
	ready: func(obj client.Object, generation int64) bool {
		c := meta.FindStatusCondition(obj.(*v1alpha1.HelloWorld).Status.Conditions, v1alpha1.ConditionReady)
		return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration >= generation
	},
	readyWhat: "Ready=True",
	rejected:  condition(v1alpha1.ConditionFailed, metav1.ConditionTrue, "Failed=True (InvalidSpec)"),
	broken:    condition(v1alpha1.ConditionDependencyAvailable, metav1.ConditionFalse, "DependencyAvailable=False"),
	summaries: map[string]string{
		"create":          "create a HelloWorld and wait until it is Ready",
		"update-burst":    "change a Ready HelloWorld five times in a row: the queue merges the events",
		"delete":          "delete a Ready HelloWorld: the reconcile that follows finds nothing and ends in success",
		"not-found":       "create and at once delete a HelloWorld: the queued request meets a NotFound",
		"permanent-error": fmt.Sprintf("count %d is over the limit: a TerminalError, no retries until the spec is fixed", v1alpha1.MaxHelloCount+1),
		"external-outage": "the dependency goes down before a HelloWorld is created, then comes back",
		"flaky-external":  "the dependency fails some calls (flakiness) while three HelloWorlds are created",
	},
}

func phase(p v1alpha1.Phase) check {
	return check{what: "phase " + string(p), ok: func(obj client.Object) bool {
		return obj.(*v1alpha1.Database).Status.Phase == p
	}}
}

func condition(typ string, status metav1.ConditionStatus, what string) check {
	return check{what: what, ok: func(obj client.Object) bool {
		c := meta.FindStatusCondition(obj.(*v1alpha1.HelloWorld).Status.Conditions, typ)
		return c != nil && c.Status == status
	}}
}

// scenarios are the seven scenarios of a lab whose objects are of kind k.
func scenarios(k *kind) []Scenario {
	first := k.samples.Name()
	create := func(name string, invalid bool) func(context.Context, Objects, string) ([]string, error) {
		return func(ctx context.Context, o Objects, _ string) ([]string, error) {
			key, err := o.Create(ctx, name, invalid)
			return []string{key}, err
		}
	}
	waitReady := func(ctx context.Context, d *driver, keys []string) error { return d.waitEachReady(ctx, keys) }
	waitGone := func(ctx context.Context, d *driver, keys []string) error { return d.waitGone(ctx, keys[0]) }
	list := []Scenario{
		{Name: "create", Did: l10n.Mark("created"), act: create(first, false), follow: waitReady},
		{Name: "update-burst", Target: true, Did: l10n.Mark("sent 5 quick spec changes to"),
			act: func(ctx context.Context, o Objects, target string) ([]string, error) {
				return []string{target}, o.Update(ctx, target, 5)
			},
			follow: waitReady},
		{Name: "delete", Target: true, Did: l10n.Mark("deleted"),
			act: func(ctx context.Context, o Objects, target string) ([]string, error) {
				return []string{target}, o.Delete(ctx, target)
			},
			follow: waitGone},
		{Name: "not-found", Did: l10n.Mark("created and at once deleted"),
			act: func(ctx context.Context, o Objects, _ string) ([]string, error) {
				key, err := o.Create(ctx, k.ghost, false)
				if err != nil {
					return nil, err
				}
				return []string{key}, o.Delete(ctx, key)
			},
			follow: waitGone},
		{Name: "permanent-error", Did: l10n.Mark("created with an invalid spec:"), act: create(k.invalid, true),
			follow: func(ctx context.Context, d *driver, keys []string) error {
				if err := d.waitUntil(ctx, keys[0], k.rejected); err != nil {
					return err
				}
				if err := d.pause(ctx, 5*time.Second, "no retries happen"); err != nil {
					return err
				}
				if err := d.objects.change(ctx, keys[0], k.samples.repair); err != nil {
					return err
				}
				return d.waitReady(ctx, keys[0])
			}},
		{Name: "external-outage", External: switches.ExternalDown, Recover: outage, Did: l10n.Mark("created"), act: create(first, false),
			follow: func(ctx context.Context, d *driver, keys []string) error {
				if err := d.waitUntil(ctx, keys[0], k.broken); err != nil {
					return err
				}
				if err := d.recover(ctx); err != nil {
					return err
				}
				return d.waitReady(ctx, keys[0])
			}},
		{Name: "flaky-external", External: switches.ExternalFlaky, Recover: outage, Did: l10n.Mark("created 3 objects, the last"),
			act: func(ctx context.Context, o Objects, _ string) ([]string, error) {
				var keys []string
				for _, name := range k.trio {
					key, err := o.Create(ctx, name, false)
					if err != nil {
						return keys, err
					}
					keys = append(keys, key)
				}
				return keys, nil
			},
			follow: func(ctx context.Context, d *driver, keys []string) error {
				if err := d.waitEachReady(ctx, keys); err != nil {
					return err
				}
				return d.recover(ctx)
			}},
	}
	for i := range list {
		list[i].Summary, list[i].kind = k.summaries[list[i].Name], k
	}
	return list
}

// catalogue maps lab → scenario name → scenario.
var catalogue = map[string]map[string]Scenario{}

func init() {
	for lab, k := range map[string]*kind{lab31: hello, lab44: database} {
		catalogue[lab] = map[string]Scenario{}
		for _, s := range scenarios(k) {
			catalogue[lab][s.Name] = s
		}
	}
}

// Names lists the scenarios of a lab, sorted (nil for an unknown lab).
func Names(lab string) []string {
	return slices.Sorted(maps.Keys(catalogue[lab]))
}

// All returns the scenarios of a lab, sorted by name.
func All(lab string) []Scenario {
	var out []Scenario
	for _, name := range Names(lab) {
		out = append(out, catalogue[lab][name])
	}
	return out
}

// Get returns a lab's scenario by name, or an error listing the valid ones.
func Get(lab, name string) (Scenario, error) {
	byName, ok := catalogue[lab]
	if !ok {
		labs := slices.Sorted(maps.Keys(catalogue))
		return Scenario{}, fmt.Errorf("no scenarios for lab %q (labs: %s)", lab, strings.Join(labs, ", "))
	}
	s, ok := byName[name]
	if !ok {
		return Scenario{}, fmt.Errorf("unknown scenario %q for lab %s (valid: %s)", name, lab, strings.Join(Names(lab), ", "))
	}
	return s, nil
}
