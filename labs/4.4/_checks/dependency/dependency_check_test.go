package dependency_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

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
	// Every phase the stored Databases go through, whichever verb wrote it.
	history := watchPhases(t, cfg, scheme, ns)
	// An uncached client: what the reconciler reads is what it last wrote,
	// so the grading does not depend on how fast the cache is. A second
	// Database's first or second status write (the move to Pending or to
	// Provisioning) fails with a Conflict.
	direct, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	conflicted := checkkit.Name(checkkit.Pick("audit", "billing"))
	failAt := checkkit.Between(1, 2)
	lostMove := map[int]learnv1alpha1.Phase{1: learnv1alpha1.PhasePending, 2: learnv1alpha1.PhaseProvisioning}[failAt]
	failing, conflicts := failStatusWrites(direct, conflicted,
		apierrors.NewConflict(learnv1alpha1.GroupVersion.WithResource("databases").GroupResource(), conflicted, errors.New("the object has been modified")), failAt)
	cluster.StartManager(t, cfg, scheme, ns, func(mgr ctrl.Manager) error {
		r := &dependency.Reconciler{Client: observe.Client(obs.Bus, failing), System: system, RetryInterval: retry}
		return ctrl.NewControllerManagedBy(mgr).Named("database").For(&learnv1alpha1.Database{}).
			WithOptions(obs.QueueOptions()).Complete(observe.Reconciler(obs.Bus, "database", nil, r))
	})
	newDB := func(name string) *learnv1alpha1.Database {
		return &learnv1alpha1.Database{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec:       learnv1alpha1.DatabaseSpec{Image: "postgres:17", Replicas: 1, DatabaseName: checkkit.Pick("stock", "books"), Username: "app", Storage: "1Gi"},
		}
	}
	db := newDB(checkkit.Name(checkkit.Pick("inventory", "ledger")))
	for _, d := range []*learnv1alpha1.Database{db, newDB(conflicted)} {
		if err := c.Create(ctx, d); err != nil {
			t.Fatalf("create Database: %v", err)
		}
	}
	key := ns + "/" + db.Name
	condition := func() (*metav1.Condition, *learnv1alpha1.Database) {
		var latest learnv1alpha1.Database
		if err := c.Get(ctx, client.ObjectKeyFromObject(db), &latest); err != nil {
			t.Fatalf("get Database: %v", err)
		}
		return meta.FindStatusCondition(latest.Status.Conditions, learnv1alpha1.ConditionExternalSystemAvailable), &latest
	}
	outageRecorded := func() bool {
		cond, latest := condition()
		return cond != nil && cond.Status == metav1.ConditionFalse && cond.Reason == learnv1alpha1.ReasonUnavailable &&
			latest.Status.Phase == learnv1alpha1.PhaseFailed
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

	t.Run("keeps waiting, and writes no status, while the outage lasts", func(t *testing.T) {
		if !outageRecorded() {
			t.Skip("needs the outage recorded first")
		}
		// The reconciles that start from here read the outage already
		// recorded: each waits RetryInterval again, and nothing in the
		// status changes, so nothing is written. Writes are counted by the
		// client calls, whatever the verb (update, patch, apply): an
		// unchanged write is a write too.
		from := lastSeq(obs.Events())
		const steady = 2
		after := func(events []observe.Event) (ids []string, ends []observe.Event) {
			for _, e := range cluster.ForKey(events, key) {
				switch {
				case e.Seq <= from:
				case e.Kind == observe.KindReconcileStart && len(ids) < steady:
					ids = append(ids, e.ReconcileID)
				case e.Kind == observe.KindReconcileEnd && slices.Contains(ids, e.ReconcileID):
					ends = append(ends, e)
				}
			}
			return ids, ends
		}
		requeued := func(e observe.Event) bool {
			return e.Result == observe.ResultRequeueAfter && e.RequeueAfter.D() == retry
		}
		what := fmt.Sprintf("every reconcile during the outage to end in RequeueAfter %s (RetryInterval), and %d more of them", retry, steady)
		events := obs.WaitFor(t, what, func(events []observe.Event) bool {
			_, ends := after(events)
			return len(ends) >= steady || slices.ContainsFunc(ends, func(e observe.Event) bool { return !requeued(e) })
		}, func(events []observe.Event) string {
			return cluster.Describe(cluster.OfKind(cluster.ForKey(events, key), observe.KindReconcileEnd))
		})
		ids, ends := after(events)
		for _, e := range ends {
			if !requeued(e) {
				checkkit.Expect(t, "%s", e.Brief(), what)
			}
		}
		var writes []observe.Event
		for _, e := range cluster.OfKind(cluster.ForKey(events, key), observe.KindClient) {
			if slices.Contains(ids, e.ReconcileID) && isStatusWrite(e.Verb) {
				writes = append(writes, e)
			}
		}
		if len(writes) > 0 {
			checkkit.Expect(t, "no status write while the outage lasts (it is written once, when it starts: only when it changes)",
				fmt.Sprintf("%d in %d reconciles that found phase %s and the condition already stored: %s",
					len(writes), steady, learnv1alpha1.PhaseFailed, cluster.Describe(writes)))
		}
	})

	t.Run("returns a status write that fails, so the queue retries it", func(t *testing.T) {
		key := ns + "/" + conflicted
		var failed observe.Event
		obs.WaitFor(t, fmt.Sprintf("the status write of %s (the move to %s) to fail", conflicted, lostMove), func(events []observe.Event) bool {
			for _, e := range cluster.OfKind(cluster.ForKey(events, key), observe.KindClient) {
				if conflicts() > 0 && isStatusWrite(e.Verb) && e.Outcome != observe.OutcomeOK {
					failed = e
					return true
				}
			}
			return false
		}, func(events []observe.Event) string {
			return cluster.Describe(cluster.OfKind(cluster.ForKey(events, key), observe.KindClient, observe.KindReconcileEnd))
		})
		var end observe.Event
		rewritten := false // the same reconcile wrote it again, and it took
		obs.WaitFor(t, "the end of the reconcile whose status write failed", func(events []observe.Event) bool {
			for _, e := range cluster.ForKey(events, key) {
				switch {
				case e.ReconcileID != failed.ReconcileID || e.Seq <= failed.Seq:
				case e.Kind == observe.KindClient && isStatusWrite(e.Verb) && e.Outcome == observe.OutcomeOK:
					rewritten = true
				case e.Kind == observe.KindReconcileEnd:
					end = e
					return true
				}
			}
			return false
		}, func([]observe.Event) string { return "it has not ended" })
		// Returning the error is the lesson's answer; a requeue of one's
		// own brings the retry too, and so does writing again at once
		// (retry.RetryOnConflict). Success alone loses the move.
		if end.Result == observe.ResultSuccess && !rewritten {
			checkkit.Expect(t, "the reconcile whose %s failed (Conflict) to return that error",
				fmt.Sprintf("%s: the move to %s was lost, and nothing brings the next reconcile", end.Brief(), lostMove), failed.Verb)
		}
		// The system stays down: nothing mends an error that repeats, and
		// a correct reconciler does not fail five times alike meanwhile.
		goneOn := obs.DoneWith(key, 5)
		checkkit.EventuallyUnless(t, fmt.Sprintf("Database %s to go on to phase %s after its failed status write", conflicted, learnv1alpha1.PhaseFailed), func() error {
			var latest learnv1alpha1.Database
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: conflicted}, &latest); err != nil {
				return err
			}
			if latest.Status.Phase != learnv1alpha1.PhaseFailed {
				return fmt.Errorf("phase %s", orNothing(string(latest.Status.Phase)))
			}
			return nil
		}, goneOn)
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
		recovered := obs.DoneWith(key, 0)
		checkkit.EventuallyUnless(t, "ExternalSystemAvailable=True (Available), an endpoint and phase Configuring once the system is back", func() error {
			cond, latest := condition()
			if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != learnv1alpha1.ReasonAvailable ||
				latest.Status.Endpoint == "" || latest.Status.Phase != learnv1alpha1.PhaseConfiguring {
				return fmt.Errorf("%s, endpoint %q, phase %s", describe(cond), latest.Status.Endpoint, orNothing(string(latest.Status.Phase)))
			}
			return nil
		}, recovered)
		if n := system.Provisioned(db.Name); n != 1 {
			checkkit.Expect(t, "1 Provision that succeeded", fmt.Sprintf("%d", n))
		}
		// The watch may trail the read above by a moment.
		var moves []learnv1alpha1.Phase
		checkkit.Eventually(t, "the watch to see phase Configuring", func() error {
			if moves = history.of(db.Name); len(moves) == 0 || moves[len(moves)-1] != learnv1alpha1.PhaseConfiguring {
				return fmt.Errorf("stored phases %s", phases(moves))
			}
			return nil
		})
		out := moves[slices.Index(moves, learnv1alpha1.PhaseFailed)+1:]
		if want := []learnv1alpha1.Phase{learnv1alpha1.PhaseProvisioning, learnv1alpha1.PhaseConfiguring}; !slices.Equal(out, want) {
			checkkit.Expect(t, "stored phases %s → %s once the system is back (out of Failed only to Provisioning, each move written)",
				fmt.Sprintf("%s → %s", learnv1alpha1.PhaseFailed, phases(out)), learnv1alpha1.PhaseFailed, phases(want))
		}
	})
}

// isStatusWrite tells a client event's verb that writes the status
// subresource: status.update, status.patch or status.apply.
func isStatusWrite(verb string) bool {
	return strings.HasPrefix(verb, "status.") && verb != "status.get"
}

func lastSeq(events []observe.Event) uint64 {
	if len(events) == 0 {
		return 0
	}
	return events[len(events)-1].Seq
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

func phases(ps []learnv1alpha1.Phase) string {
	if len(ps) == 0 {
		return "nothing"
	}
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = orNothing(string(p))
	}
	return strings.Join(parts, " → ")
}

// phaseLog is what watchPhases saw: for each Database, the phases its
// stored status went through, in order, each once per stay.
type phaseLog struct {
	mu     sync.Mutex
	byName map[string][]learnv1alpha1.Phase
}

func (l *phaseLog) of(name string) []learnv1alpha1.Phase {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.byName[name])
}

// watchPhases watches the Databases of ns until the check ends and
// records the phases they are stored with: every write that changed the
// object, whichever verb made it. It could move to checkkit/cluster.
func watchPhases(t *testing.T, cfg *rest.Config, scheme *runtime.Scheme, ns string) *phaseLog {
	t.Helper()
	watching, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w, err := watching.Watch(ctx, &learnv1alpha1.DatabaseList{}, client.InNamespace(ns))
	if err != nil {
		cancel()
		t.Fatalf("watch Databases: %v", err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); w.Stop(); <-done })
	log := &phaseLog{byName: map[string][]learnv1alpha1.Phase{}}
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			db, ok := ev.Object.(*learnv1alpha1.Database)
			if !ok {
				continue
			}
			log.mu.Lock()
			ps := log.byName[db.Name]
			if db.Status.Phase != "" && (len(ps) == 0 || ps[len(ps)-1] != db.Status.Phase) {
				log.byName[db.Name] = append(ps, db.Status.Phase)
			}
			log.mu.Unlock()
		}
	}()
	return log
}

// failStatusWrites wraps c so that the status writes numbered nths (from
// 1) of the object named name fail with err, as a conflict or a server
// error would, whichever verb makes them: update, patch or server-side
// apply. failed reports how many of them have failed so far. It is
// cluster.FailStatusWrite with several failures and apply too; it could
// move to checkkit/cluster.
func failStatusWrites(c client.WithWatch, name string, err error, nths ...int) (wrapped client.Client, failed func() int) {
	var mu sync.Mutex
	seen, done := 0, 0
	fail := func(sub, objName string) error {
		if sub != "status" || objName != name {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if seen++; slices.Contains(nths, seen) {
			done++
			return err
		}
		return nil
	}
	wrapped = interceptor.NewClient(c, interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if err := fail(sub, obj.GetName()); err != nil {
				return err
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if err := fail(sub, obj.GetName()); err != nil {
				return err
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			if err := fail(sub, applyName(obj)); err != nil {
				return err
			}
			return c.SubResource(sub).Apply(ctx, obj, opts...)
		},
	})
	return wrapped, func() int {
		mu.Lock()
		defer mu.Unlock()
		return done
	}
}

// applyName is the name an apply configuration carries: generated ones
// have GetName() *string, unstructured ones GetName() string.
func applyName(obj runtime.ApplyConfiguration) string {
	switch o := obj.(type) {
	case interface{ GetName() *string }:
		if n := o.GetName(); n != nil {
			return *n
		}
	case interface{ GetName() string }:
		return o.GetName()
	}
	return ""
}
