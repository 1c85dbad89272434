package together_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/operator-lab/lab/labs/checkkit"
	"github.com/operator-lab/lab/labs/checkkit/cluster"
	"github.com/operator-lab/lab/observe"

	learnv1alpha1 "example.com/lab44/api/v1alpha1"
	"example.com/lab44/backoff"
	"example.com/lab44/breaker"
	"example.com/lab44/external"
	"example.com/lab44/together"
)

var allowed = map[learnv1alpha1.Phase][]learnv1alpha1.Phase{
	"":                              {learnv1alpha1.PhasePending},
	learnv1alpha1.PhasePending:      {learnv1alpha1.PhaseProvisioning},
	learnv1alpha1.PhaseProvisioning: {learnv1alpha1.PhaseConfiguring, learnv1alpha1.PhaseFailed},
	learnv1alpha1.PhaseConfiguring:  {learnv1alpha1.PhaseDeploying, learnv1alpha1.PhaseFailed},
	learnv1alpha1.PhaseDeploying:    {learnv1alpha1.PhaseVerifying, learnv1alpha1.PhaseFailed},
	learnv1alpha1.PhaseVerifying:    {learnv1alpha1.PhaseReady, learnv1alpha1.PhaseFailed},
	learnv1alpha1.PhaseReady:        {learnv1alpha1.PhaseUpdating},
	learnv1alpha1.PhaseUpdating:     {learnv1alpha1.PhaseConfiguring, learnv1alpha1.PhaseFailed},
	learnv1alpha1.PhaseFailed:       {learnv1alpha1.PhasePending},
}

// TestOutageMidProvisioning: the external system starts failing right after
// the instance is provisioned; the Database must still reach Ready, with the
// breaker and the backoff keeping the calls in check.
func TestOutageMidProvisioning(t *testing.T) {
	ctx := context.Background()
	obs := cluster.Observe(t)
	cfg := cluster.Config(t)
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = learnv1alpha1.AddToScheme(scheme)
	c := cluster.Client(t, cfg, scheme)
	ns := cluster.Namespace(t, c)
	db := &learnv1alpha1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: checkkit.Name(checkkit.Pick("shop", "crm", "wiki")), Namespace: ns},
		Spec:       learnv1alpha1.DatabaseSpec{Engine: "postgres", Version: "16"},
	}
	system := cluster.NewFakeSystem(external.ErrUnavailable)
	threshold := checkkit.Between(2, 3)
	failures := threshold + checkkit.Between(2, 3)
	system.FailStep(db.Name, "configure", failures)
	cooldown := time.Duration(checkkit.Between(300, 600)) * time.Millisecond
	policy := backoff.Policy{Base: time.Duration(checkkit.Between(20, 60)) * time.Millisecond, Max: 2 * time.Second}

	var mu sync.Mutex
	var written []learnv1alpha1.Phase
	cluster.StartManager(t, cfg, scheme, ns, func(mgr ctrl.Manager) error {
		record := func(obj client.Object) {
			if d, ok := obj.(*learnv1alpha1.Database); ok && d.Name == db.Name && d.Status.Phase != "" {
				mu.Lock()
				defer mu.Unlock()
				if n := len(written); n == 0 || written[n-1] != d.Status.Phase {
					written = append(written, d.Status.Phase)
				}
			}
		}
		r := &together.Reconciler{
			// An uncached client: what the reconciler reads is what it last
			// wrote, so the grading does not depend on how fast the cache is.
			Client:      cluster.StatusWrites(observe.Client(obs.Bus, c), record),
			System:      system,
			Breaker:     breaker.New(threshold, cooldown, breaker.RealClock{}),
			Backoff:     policy,
			HealthRetry: 200 * time.Millisecond,
		}
		return ctrl.NewControllerManagedBy(mgr).Named("database").
			For(&learnv1alpha1.Database{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
			Owns(&corev1.Secret{}).
			WithOptions(obs.QueueOptions()).Complete(observe.Reconciler(obs.Bus, "database", nil, r))
	})
	if err := c.Create(ctx, db); err != nil {
		t.Fatal(err)
	}
	key := ns + "/" + db.Name
	phases := func() []learnv1alpha1.Phase {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(written)
	}
	show := func(ps []learnv1alpha1.Phase) string {
		parts := make([]string, len(ps))
		for i, p := range ps {
			parts[i] = string(p)
		}
		return strings.Join(parts, " → ")
	}

	t.Run(fmt.Sprintf("reaches Ready despite %d failed configure calls", failures), func(t *testing.T) {
		checkkit.Eventually(t, "the Database to reach Ready", func() error {
			var latest learnv1alpha1.Database
			if err := c.Get(ctx, client.ObjectKeyFromObject(db), &latest); err != nil {
				return err
			}
			if latest.Status.Phase != learnv1alpha1.PhaseReady {
				return fmt.Errorf("phase %q after %s (reconciles: %s)", latest.Status.Phase, show(phases()),
					cluster.Describe(cluster.OfKind(cluster.ForKey(obs.Events(), key), observe.KindReconcileEnd)))
			}
			return nil
		})
	})

	t.Run("persists valid transitions only", func(t *testing.T) {
		prev := learnv1alpha1.Phase("")
		for _, p := range phases() {
			if !slices.Contains(allowed[prev], p) {
				checkkit.Expect(t, "valid transitions", fmt.Sprintf("%s → %s in %s", prev, p, show(phases())))
			}
			prev = p
		}
	})

	t.Run("never returns an error (with or without RequeueAfter)", func(t *testing.T) {
		for _, e := range cluster.OfKind(cluster.ForKey(obs.Events(), key), observe.KindReconcileEnd) {
			if e.Result == observe.ResultError {
				what := "an error"
				if e.RequeueAfter > 0 {
					what = fmt.Sprintf("an error together with RequeueAfter %s (the controller ignores RequeueAfter then)", e.RequeueAfter)
				}
				checkkit.Expect(t, "RequeueAfter with no error while the system fails", what+": "+e.Error)
			}
		}
	})

	t.Run("backs off exponentially", func(t *testing.T) {
		var delays []time.Duration
		for _, e := range cluster.OfKind(cluster.ForKey(obs.Events(), key), observe.KindReconcileEnd) {
			if e.Result == observe.ResultRequeueAfter {
				delays = append(delays, e.RequeueAfter.D())
			}
		}
		if len(delays) < 2 || delays[0] != policy.Base || delays[1] != 2*policy.Base {
			var calls []string
			for _, c := range system.Calls() {
				calls = append(calls, fmt.Sprintf("%s:%v", c.Step, c.Err != nil))
			}
			checkkit.Expect(t, "RequeueAfter %s then %s after the first failures", fmt.Sprintf("%v; calls %v", delays, calls), policy.Base, 2*policy.Base)
		}
	})

	t.Run(fmt.Sprintf("the breaker stops calls for %s after %d failures", cooldown, threshold), func(t *testing.T) {
		var configure []cluster.Call
		for _, call := range system.CallsFor(db.Name) {
			if call.Step == "configure" {
				configure = append(configure, call)
			}
		}
		if len(configure) != failures+1 {
			checkkit.Expect(t, "%d configure calls (failures, then one success)", fmt.Sprintf("%d", len(configure)), failures+1)
		}
		for i := threshold; i < len(configure); i++ {
			if gap := configure[i].At.Sub(configure[i-1].At); gap < cooldown {
				checkkit.Expect(t, "at least %s between calls once the breaker opened", fmt.Sprintf("call %d only %s after call %d", i+1, gap.Round(time.Millisecond), i), cooldown)
			}
		}
	})

	t.Run("creates the credentials Secret once, owned", func(t *testing.T) {
		var s corev1.Secret
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: together.CredentialsSecret(db)}, &s); err != nil {
			checkkit.Expect(t, "Secret %s", err.Error(), together.CredentialsSecret(db))
		}
		if metav1.GetControllerOf(&s) == nil {
			checkkit.Expect(t, "the Secret owned by the Database", "no owner")
		}
		creates := 0
		for _, e := range cluster.OfKind(cluster.ForKey(obs.Events(), key), observe.KindClient) {
			if e.Verb == "create" && e.Object == "Secret" {
				creates++
			}
		}
		if creates != 1 {
			checkkit.Expect(t, "1 create of the Secret", fmt.Sprintf("%d", creates))
		}
	})
}
