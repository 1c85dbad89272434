package statemachine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
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
	"example.com/lab44/external"
	"example.com/lab44/statemachine"
)

// allowed is the lesson's state diagram, the reference the checks hold the
// learner's transitions to.
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

var allPhases = []learnv1alpha1.Phase{"", learnv1alpha1.PhasePending, learnv1alpha1.PhaseProvisioning, learnv1alpha1.PhaseConfiguring,
	learnv1alpha1.PhaseDeploying, learnv1alpha1.PhaseVerifying, learnv1alpha1.PhaseReady, learnv1alpha1.PhaseFailed, learnv1alpha1.PhaseUpdating}

// written is one persisted status.
type written struct {
	phase, failed           learnv1alpha1.Phase
	generation, observedGen int64
	cond                    *metav1.Condition
}

type statusLog struct {
	mu     sync.Mutex
	byName map[string][]written
}

func (l *statusLog) record(obj client.Object) {
	db, ok := obj.(*learnv1alpha1.Database)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byName[db.Name] = append(l.byName[db.Name], written{
		phase: db.Status.Phase, failed: db.Status.FailedPhase, generation: db.Generation, observedGen: db.Status.ObservedGeneration,
		cond: meta.FindStatusCondition(db.Status.Conditions, statemachine.ConditionReady),
	})
}

func (l *statusLog) of(name string) []written {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]written(nil), l.byName[name]...)
}

func phases(ws []written) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = string(w.phase)
	}
	return strings.Join(parts, " → ")
}

func TestCanTransition(t *testing.T) {
	for _, from := range allPhases {
		for _, to := range allPhases[1:] {
			want := slices.Contains(allowed[from], to)
			if got := statemachine.CanTransition(from, to); got != want {
				checkkit.Expect(t, "CanTransition(%q, %q) = %v", fmt.Sprintf("%v", got), from, to, want)
			}
		}
	}
}

func TestStateMachine(t *testing.T) {
	ctx := context.Background()
	obs := cluster.Observe(t)
	cfg := cluster.Config(t)
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = learnv1alpha1.AddToScheme(scheme)
	system := cluster.NewFakeSystem(external.ErrUnavailable)
	log := &statusLog{byName: map[string][]written{}}
	retry := time.Duration(checkkit.Between(1000, 2000)) * time.Millisecond
	c := cluster.Client(t, cfg, scheme)
	ns := cluster.Namespace(t, c)
	// An uncached client: what the reconciler reads is what it last wrote,
	// so the grading does not depend on how fast the cache is.
	direct := cluster.Client(t, cfg, scheme)
	cluster.StartManager(t, cfg, scheme, ns, func(mgr ctrl.Manager) error {
		r := &statemachine.Reconciler{
			Client:     cluster.StatusWrites(observe.Client(obs.Bus, direct), log.record),
			System:     system,
			RetryDelay: retry,
		}
		return ctrl.NewControllerManagedBy(mgr).Named("database").For(&learnv1alpha1.Database{}).
			WithOptions(obs.QueueOptions()).Complete(observe.Reconciler(obs.Bus, "database", nil, r))
	})
	newDB := func(prefix string) *learnv1alpha1.Database {
		db := &learnv1alpha1.Database{
			ObjectMeta: metav1.ObjectMeta{Name: checkkit.Name(prefix), Namespace: ns},
			Spec:       learnv1alpha1.DatabaseSpec{Engine: checkkit.Pick("postgres", "mysql"), Version: checkkit.Pick("15", "16", "8.4")},
		}
		return db
	}
	happy, flaky := newDB("orders"), newDB("billing")
	failing := checkkit.Pick(learnv1alpha1.PhaseConfiguring, learnv1alpha1.PhaseDeploying, learnv1alpha1.PhaseVerifying)
	system.FailStep(flaky.Name, stepOf[failing], 1)
	for _, db := range []*learnv1alpha1.Database{happy, flaky} {
		if err := c.Create(ctx, db); err != nil {
			t.Fatalf("create Database: %v", err)
		}
	}

	waitReady := func(t *testing.T, name string, generation int64) []written {
		t.Helper()
		checkkit.Eventually(t, fmt.Sprintf("Database %s to reach Ready (generation %d)", name, generation), func() error {
			ws := log.of(name)
			if n := len(ws); n > 0 && ws[n-1].phase == learnv1alpha1.PhaseReady && ws[n-1].observedGen == generation {
				return nil
			}
			return fmt.Errorf("persisted phases %s", orNothing(phases(log.of(name))))
		})
		return log.of(name)
	}
	checkWrites := func(t *testing.T, ws []written) {
		t.Helper()
		prev := learnv1alpha1.Phase("")
		for _, w := range ws {
			if !slices.Contains(allowed[prev], w.phase) {
				checkkit.Expect(t, "only valid transitions", fmt.Sprintf("%s → %s in %s", orNothing(string(prev)), w.phase, phases(ws)))
			}
			if w.observedGen != w.generation {
				checkkit.Expect(t, "status.observedGeneration %d with phase %s", fmt.Sprintf("%d", w.observedGen), w.generation, w.phase)
			}
			wantStatus := metav1.ConditionFalse
			if w.phase == learnv1alpha1.PhaseReady {
				wantStatus = metav1.ConditionTrue
			}
			if w.cond == nil || w.cond.Status != wantStatus || w.cond.Reason != string(w.phase) || w.cond.ObservedGeneration != w.generation {
				checkkit.Expect(t, "condition Ready=%s reason %s observedGeneration %d with phase %s", describeCond(w.cond),
					wantStatus, w.phase, w.generation, w.phase)
			}
			prev = w.phase
		}
	}

	happyReady := false
	t.Run("walks every phase, each persisted", func(t *testing.T) {
		ws := waitReady(t, happy.Name, 1)
		happyReady = true
		want := "Pending → Provisioning → Configuring → Deploying → Verifying → Ready"
		if got := phases(ws); got != want {
			checkkit.Expect(t, "persisted phases "+want, got)
		}
		checkWrites(t, ws)
	})

	t.Run(fmt.Sprintf("a failed %s goes through Failed and retries", failing), func(t *testing.T) {
		ws := waitReady(t, flaky.Name, 1)
		checkWrites(t, ws)
		i := slices.IndexFunc(ws, func(w written) bool { return w.phase == learnv1alpha1.PhaseFailed })
		if i < 0 || ws[i-1].phase != failing {
			checkkit.Expect(t, "%s → Failed when its step fails", phases(ws), failing)
		}
		if ws[i].failed != failing {
			checkkit.Expect(t, "status.failedPhase %s while Failed", orNothing(string(ws[i].failed)), failing)
		}
	})

	t.Run("a spec change takes Ready through Updating", func(t *testing.T) {
		if !happyReady {
			t.Skip("needs a Database that reached Ready first")
		}
		var latest learnv1alpha1.Database
		if err := c.Get(ctx, client.ObjectKeyFromObject(happy), &latest); err != nil {
			t.Fatal(err)
		}
		before := len(log.of(happy.Name))
		latest.Spec.Version = checkkit.Pick("17", "18", "9.0")
		if err := c.Update(ctx, &latest); err != nil {
			t.Fatal(err)
		}
		ws := waitReady(t, happy.Name, latest.Generation)
		checkWrites(t, ws)
		want := "Updating → Configuring → Deploying → Verifying → Ready"
		if got := phases(ws[before:]); got != want {
			checkkit.Expect(t, "persisted phases "+want+" after the spec change", got)
		}
	})

	t.Run("failures are phases, not errors", func(t *testing.T) {
		for _, e := range cluster.OfKind(obs.Events(), observe.KindReconcileEnd) {
			if e.Result == observe.ResultError && !strings.Contains(e.Error, conflictText) {
				checkkit.Expect(t, "no reconcile errors (a failed step is the Failed phase plus RequeueAfter)", e.Brief())
			}
		}
	})
}

// conflictText marks an optimistic-concurrency conflict: retrying it is
// the normal answer, so it does not count as a failure here.
const conflictText = "the object has been modified"

// stepOf names the external step each phase performs.
var stepOf = map[learnv1alpha1.Phase]string{
	learnv1alpha1.PhaseConfiguring: "configure",
	learnv1alpha1.PhaseDeploying:   "deploy",
	learnv1alpha1.PhaseVerifying:   "verify",
}

func describeCond(c *metav1.Condition) string {
	if c == nil {
		return "no Ready condition"
	}
	return fmt.Sprintf("Ready=%s reason %s observedGeneration %d", c.Status, c.Reason, c.ObservedGeneration)
}

func orNothing(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}
