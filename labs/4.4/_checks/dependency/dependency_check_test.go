package dependency_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator-lab/lab/labs/checkkit"
	"github.com/operator-lab/lab/labs/checkkit/cluster"
	"github.com/operator-lab/lab/observe"

	learnv1alpha1 "example.com/lab44/api/v1alpha1"
	"example.com/lab44/dependency"
	"example.com/lab44/external"
)

func TestExternalDependency(t *testing.T) {
	ctx := context.Background()
	obs := cluster.Observe(t)
	cfg := cluster.Config(t)
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = learnv1alpha1.AddToScheme(scheme)
	system := cluster.NewFakeSystem(external.ErrUnavailable)
	system.SetDown(true)
	retry := time.Duration(checkkit.Between(300, 900)) * time.Millisecond
	c := cluster.Client(t, cfg, scheme)
	ns := cluster.Namespace(t, c)
	// An uncached client: what the reconciler reads is what it last wrote,
	// so the grading does not depend on how fast the cache is.
	direct := cluster.Client(t, cfg, scheme)
	cluster.StartManager(t, cfg, scheme, ns, func(mgr ctrl.Manager) error {
		r := &dependency.Reconciler{Client: observe.Client(obs.Bus, direct), System: system, RetryInterval: retry}
		return ctrl.NewControllerManagedBy(mgr).Named("database").For(&learnv1alpha1.Database{}).
			WithOptions(obs.QueueOptions()).Complete(observe.Reconciler(obs.Bus, "database", nil, r))
	})
	db := &learnv1alpha1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: checkkit.Name(checkkit.Pick("inventory", "ledger")), Namespace: ns},
		Spec:       learnv1alpha1.DatabaseSpec{Image: "postgres:17", Replicas: 1, DatabaseName: checkkit.Pick("stock", "books"), Username: "app", Storage: "1Gi"},
	}
	if err := c.Create(ctx, db); err != nil {
		t.Fatalf("create Database: %v", err)
	}
	key := ns + "/" + db.Name
	condition := func() (*metav1.Condition, *learnv1alpha1.Database) {
		var latest learnv1alpha1.Database
		if err := c.Get(ctx, client.ObjectKeyFromObject(db), &latest); err != nil {
			t.Fatalf("get Database: %v", err)
		}
		return meta.FindStatusCondition(latest.Status.Conditions, learnv1alpha1.ConditionExternalSystemAvailable), &latest
	}

	t.Run(fmt.Sprintf("waits %s without an error while the system is down", retry), func(t *testing.T) {
		events := obs.WaitFor(t, "three reconciles while the system is down", func(events []observe.Event) bool {
			return len(cluster.OfKind(cluster.ForKey(events, key), observe.KindReconcileEnd)) >= 3
		}, func(events []observe.Event) string {
			return cluster.Describe(cluster.OfKind(cluster.ForKey(events, key), observe.KindReconcileEnd, observe.KindQueueAddAfter, observe.KindQueueAddRateLimited))
		})
		for _, e := range cluster.ForKey(events, key) {
			switch {
			case e.Kind == observe.KindReconcileEnd && e.Result == observe.ResultError:
				checkkit.Expect(t, "no errors while waiting for the dependency", e.Brief())
			case e.Kind == observe.KindQueueAddRateLimited:
				checkkit.Expect(t, "queue.add_after %s", "queue.add_rate_limited", retry)
			case e.Kind == observe.KindQueueAddAfter && e.Delay.D() != retry:
				checkkit.Expect(t, "queue.add_after %s (RetryInterval)", e.Brief(), retry)
			}
		}
	})

	t.Run("reports the outage: phase Failed and a condition", func(t *testing.T) {
		cond, latest := condition()
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != learnv1alpha1.ReasonUnavailable {
			checkkit.Expect(t, "condition %s=False reason %s", describe(cond), learnv1alpha1.ConditionExternalSystemAvailable, learnv1alpha1.ReasonUnavailable)
		}
		if latest.Status.Phase != learnv1alpha1.PhaseFailed {
			checkkit.Expect(t, "phase %s while the system is down", orNothing(string(latest.Status.Phase)), learnv1alpha1.PhaseFailed)
		}
	})

	t.Run("does no work while the system is down", func(t *testing.T) {
		for _, call := range system.Calls() {
			if call.Step != cluster.StepHealthCheck {
				checkkit.Expect(t, "only health checks during the outage", "a call to "+call.Step)
			}
		}
	})

	t.Run("recovers when the system is back", func(t *testing.T) {
		system.SetDown(false)
		checkkit.Eventually(t, "ExternalSystemAvailable=True (Available), an endpoint and phase Configuring once the system is back", func() error {
			cond, latest := condition()
			if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != learnv1alpha1.ReasonAvailable ||
				latest.Status.Endpoint == "" || latest.Status.Phase != learnv1alpha1.PhaseConfiguring {
				return fmt.Errorf("%s, endpoint %q, phase %s", describe(cond), latest.Status.Endpoint, orNothing(string(latest.Status.Phase)))
			}
			return nil
		})
		if n := system.Provisioned(db.Name); n != 1 {
			checkkit.Expect(t, "1 Provision that succeeded", fmt.Sprintf("%d", n))
		}
	})
}

func orNothing(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

func describe(c *metav1.Condition) string {
	if c == nil {
		return "no condition"
	}
	return fmt.Sprintf("%s=%s reason %s", c.Type, c.Status, c.Reason)
}
