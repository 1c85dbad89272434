package finalizer_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/operator-lab/lab/labs/checkkit"
	"github.com/operator-lab/lab/labs/checkkit/cluster"
	"github.com/operator-lab/lab/observe"

	learnv1alpha1 "example.com/lab44/api/v1alpha1"
	"example.com/lab44/external"
	"example.com/lab44/finalizer"
)

// otherFinalizer is another controller's finalizer on the same Database.
const otherFinalizer = "backup.example.com/snapshot"

// sighting is the Database as the API server had it when the external
// system received a call for it.
type sighting struct {
	step       string
	exists     bool
	finalizers []string
	readErr    error // reading the Database failed (not NotFound)
	err        error // the call's outcome
}

func (s sighting) ours() bool { return slices.Contains(s.finalizers, learnv1alpha1.DatabaseFinalizer) }

// witness is the fake external system, looking at the Database (uncached)
// on every Provision and Deprovision.
type witness struct {
	*cluster.FakeSystem
	c  client.Client
	ns string

	mu   sync.Mutex
	seen map[string][]sighting
}

// look reads the Database as it is now.
func (w *witness) look(step, key string) sighting {
	name := key[len(w.ns)+1:]
	var db learnv1alpha1.Database
	s := sighting{step: step}
	switch err := w.c.Get(context.Background(), client.ObjectKey{Namespace: w.ns, Name: name}, &db); {
	case err == nil:
		s.exists, s.finalizers = true, db.Finalizers
	case !apierrors.IsNotFound(err):
		s.readErr = err
	}
	return s
}

func (w *witness) record(key string, s sighting, err error) {
	s.err = err
	w.mu.Lock()
	defer w.mu.Unlock()
	name := key[len(w.ns)+1:]
	w.seen[name] = append(w.seen[name], s)
}

func (w *witness) Provision(ctx context.Context, key, databaseName string) (string, error) {
	s := w.look(cluster.StepProvision, key)
	endpoint, err := w.FakeSystem.Provision(ctx, key, databaseName)
	w.record(key, s, err)
	return endpoint, err
}

// Deprovision looks at the Database before the call: it must still be
// there, held by the finalizer, while its database is dropped.
func (w *witness) Deprovision(ctx context.Context, key string) error {
	s := w.look(cluster.StepDeprovision, key)
	err := w.FakeSystem.Deprovision(ctx, key)
	w.record(key, s, err)
	return err
}

func (w *witness) sightings(name, step string) []sighting {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []sighting
	for _, s := range w.seen[name] {
		if s.step == step {
			out = append(out, s)
		}
	}
	return out
}

func TestFinalizer(t *testing.T) {
	ctx := context.Background()
	obs := cluster.Observe(t)
	cfg := cluster.Config(t)
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = learnv1alpha1.AddToScheme(scheme)
	direct := cluster.Client(t, cfg, scheme)
	ns := cluster.Namespace(t, direct)
	system := &witness{FakeSystem: cluster.NewFakeSystem(external.ErrUnavailable), c: direct, ns: ns, seen: map[string][]sighting{}}

	// The Database "shared" is read stale once: its first read returns the
	// object as it was before another controller added its finalizer.
	shared := checkkit.Name("shared")
	var staleReads atomic.Int32
	watching, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	stale := interceptor.NewClient(watching, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if err := c.Get(ctx, key, obj, opts...); err != nil {
				return err
			}
			if _, ok := obj.(*learnv1alpha1.Database); ok && key.Name == shared && staleReads.Add(1) == 1 {
				// obj is now stale: another controller adds its finalizer.
				return edit(direct, key, withFinalizer(otherFinalizer))
			}
			return nil
		},
	})
	cluster.StartManager(t, cfg, scheme, ns, func(mgr ctrl.Manager) error {
		r := &finalizer.Reconciler{Client: observe.Client(obs.Bus, stale), System: system}
		return ctrl.NewControllerManagedBy(mgr).Named("database").For(&learnv1alpha1.Database{}).
			WithOptions(obs.QueueOptions()).Complete(observe.Reconciler(obs.Bus, "database", nil, r))
	})

	create := func(t *testing.T, prefix string) *learnv1alpha1.Database {
		db := newDatabase(ns, checkkit.Name(prefix))
		if prefix == "shared" {
			db.Name = shared
		}
		if err := direct.Create(ctx, db); err != nil {
			t.Fatalf("create Database: %v", err)
		}
		return db
	}
	provisioned := func(t *testing.T, db *learnv1alpha1.Database) {
		t.Helper()
		checkkit.Eventually(t, "the Database "+db.Name+" provisioned", func() error {
			if system.Provisioned(db.Name) == 0 {
				return fmt.Errorf("no successful Provision")
			}
			return nil
		})
	}
	del := func(t *testing.T, db *learnv1alpha1.Database) {
		t.Helper()
		if err := direct.Delete(ctx, db); err != nil {
			t.Fatalf("delete Database: %v", err)
		}
	}
	gone := func(t *testing.T, db *learnv1alpha1.Database, what string) {
		t.Helper()
		checkkit.Eventually(t, what, func() error {
			var latest learnv1alpha1.Database
			switch err := direct.Get(ctx, client.ObjectKeyFromObject(db), &latest); {
			case apierrors.IsNotFound(err):
				return nil
			case err != nil:
				return err
			default:
				return fmt.Errorf("still there with finalizers %v after %s", latest.Finalizers,
					describeDeprovisions(system.sightings(db.Name, cluster.StepDeprovision)))
			}
		})
	}

	orders := create(t, checkkit.Pick("orders", "payments"))
	t.Run("adds its finalizer before provisioning", func(t *testing.T) {
		provisioned(t, orders)
		first := system.sightings(orders.Name, cluster.StepProvision)[0]
		if !first.ours() {
			checkkit.Expect(t, "the finalizer %s on the Database when its database was provisioned (a crash right after would leak it)",
				fmt.Sprintf("finalizers %v", first.finalizers), learnv1alpha1.DatabaseFinalizer)
		}
	})

	sharedDB := create(t, "shared")
	t.Run("keeps another controller's finalizer", func(t *testing.T) {
		provisioned(t, sharedDB)
		var latest learnv1alpha1.Database
		if err := direct.Get(ctx, client.ObjectKeyFromObject(sharedDB), &latest); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(latest.Finalizers, otherFinalizer) || !slices.Contains(latest.Finalizers, learnv1alpha1.DatabaseFinalizer) {
			checkkit.Expect(t, "finalizers %s and %s (another controller added its own while this reconcile worked from a stale copy)",
				fmt.Sprintf("%v", latest.Finalizers), learnv1alpha1.DatabaseFinalizer, otherFinalizer)
		}
	})

	t.Run("writes nothing when its finalizer is there already", func(t *testing.T) {
		key := ns + "/" + orders.Name
		mark := len(obs.Events())
		annotate(t, direct, client.ObjectKeyFromObject(orders), "poke")
		// Only reconciles that started after the poke count: the one that
		// added the finalizer may still be ending.
		later := func(events []observe.Event) map[string]bool {
			ids := map[string]bool{}
			for _, e := range cluster.OfKind(cluster.ForKey(events[mark:], key), observe.KindReconcileStart) {
				ids[e.ReconcileID] = true
			}
			return ids
		}
		events := obs.WaitFor(t, "a reconcile of the Database after its annotation changed", func(events []observe.Event) bool {
			ids := later(events)
			return slices.ContainsFunc(cluster.OfKind(cluster.ForKey(events[mark:], key), observe.KindReconcileEnd),
				func(e observe.Event) bool { return ids[e.ReconcileID] })
		}, func(events []observe.Event) string { return cluster.Describe(cluster.ForKey(events, key)) })
		ids := later(events)
		for _, e := range cluster.OfKind(cluster.ForKey(events[mark:], key), observe.KindClient) {
			call := e.ClientCall()
			if ids[e.ReconcileID] && call.Object == "Database" && slices.Contains([]string{"update", "patch", "apply"}, call.Verb) {
				checkkit.Expect(t, "no write of the Database when the finalizer %s is on it already", "a client "+call.Verb+" call", learnv1alpha1.DatabaseFinalizer)
			}
		}
	})

	t.Run("deprovisions before the Database goes", func(t *testing.T) {
		del(t, orders)
		gone(t, orders, "the deleted Database "+orders.Name+" to go")
		checkDeprovisioned(t, system.sightings(orders.Name, cluster.StepDeprovision), 0)
	})

	t.Run("retries a failed deprovision and keeps the Database meanwhile", func(t *testing.T) {
		billing := create(t, "billing")
		provisioned(t, billing)
		failures := checkkit.Between(2, 3)
		system.FailStep(billing.Name, cluster.StepDeprovision, failures)
		del(t, billing)
		gone(t, billing, fmt.Sprintf("the deleted Database %s to go once Deprovision succeeds (it fails %d times first)", billing.Name, failures))
		checkDeprovisioned(t, system.sightings(billing.Name, cluster.StepDeprovision), failures)
	})

	t.Run("deprovisions once, not again after its finalizer is gone", func(t *testing.T) {
		// The other controller's finalizer keeps the object after ours is
		// removed: later reconciles must leave the external system alone.
		addFinalizer(t, direct, client.ObjectKeyFromObject(sharedDB), otherFinalizer)
		t.Cleanup(func() { removeFinalizer(t, direct, client.ObjectKeyFromObject(sharedDB), otherFinalizer) })
		del(t, sharedDB)
		key := ns + "/" + sharedDB.Name
		checkkit.Eventually(t, "the finalizer "+learnv1alpha1.DatabaseFinalizer+" removed after Deprovision", func() error {
			var latest learnv1alpha1.Database
			if err := direct.Get(ctx, client.ObjectKeyFromObject(sharedDB), &latest); err != nil {
				return err
			}
			if slices.Contains(latest.Finalizers, learnv1alpha1.DatabaseFinalizer) {
				return fmt.Errorf("finalizers %v after %s", latest.Finalizers, describeDeprovisions(system.sightings(sharedDB.Name, cluster.StepDeprovision)))
			}
			return nil
		})
		// Wake the reconciler twice more: an annotation is a change it sees.
		for i := range 2 {
			before := len(cluster.OfKind(cluster.ForKey(obs.Events(), key), observe.KindReconcileEnd))
			annotate(t, direct, client.ObjectKeyFromObject(sharedDB), fmt.Sprintf("poke-%d", i))
			obs.WaitFor(t, "another reconcile of the deleting Database", func(events []observe.Event) bool {
				return len(cluster.OfKind(cluster.ForKey(events, key), observe.KindReconcileEnd)) > before
			}, func(events []observe.Event) string { return cluster.Describe(cluster.ForKey(events, key)) })
		}
		calls := system.sightings(sharedDB.Name, cluster.StepDeprovision)
		for _, s := range calls {
			if s.err == nil && !s.ours() {
				checkkit.Expect(t, "no Deprovision once the finalizer %s was removed", "one with finalizers "+fmt.Sprintf("%v", s.finalizers),
					learnv1alpha1.DatabaseFinalizer)
			}
		}
		checkDeprovisioned(t, calls, 0)
	})
}

// checkDeprovisioned checks the Deprovision calls for one Database: exactly
// one succeeded, after failures failed ones, and until it did the Database was
// there, held by the finalizer.
func checkDeprovisioned(t *testing.T, calls []sighting, failures int) {
	t.Helper()
	succeeded := 0
	for _, s := range calls {
		if s.err == nil {
			succeeded++
		}
	}
	switch {
	case len(calls) == 0:
		checkkit.Expect(t, "a Deprovision call while the deleted Database was still there", "none before it went: its database leaks in the external system")
	case succeeded == 0:
		checkkit.Expect(t, "the Database kept until Deprovision succeeded", "it went after "+describeDeprovisions(calls)+", its database still there")
	case len(calls) < failures+1:
		checkkit.Expect(t, "the failed Deprovision retried", describeDeprovisions(calls))
	case succeeded > 1:
		checkkit.Expect(t, "exactly one successful Deprovision", describeDeprovisions(calls))
	}
	// Up to the first success, every call found the Database held by the
	// finalizer: removed earlier, the object could go with its database kept.
	for i, s := range calls {
		if !s.exists || !s.ours() {
			saw := fmt.Sprintf("finalizers %v", s.finalizers)
			switch {
			case s.readErr != nil:
				saw = "an error reading it: " + s.readErr.Error()
			case !s.exists:
				saw = "it gone already"
			}
			checkkit.Expect(t, "the Database, with its finalizer, still there at Deprovision call %d", saw, i+1)
		}
		if s.err == nil {
			break
		}
	}
}

func describeDeprovisions(calls []sighting) string {
	ok, failed := 0, 0
	for _, s := range calls {
		if s.err == nil {
			ok++
		} else {
			failed++
		}
	}
	return fmt.Sprintf("%d successful and %d failed Deprovision calls", ok, failed)
}

func newDatabase(ns, name string) *learnv1alpha1.Database {
	return &learnv1alpha1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: learnv1alpha1.DatabaseSpec{Image: "postgres:17", Replicas: 1, DatabaseName: checkkit.Pick("orders", "ledger"),
			Username: "app", Storage: "1Gi"},
	}
}

// edit changes the Database as another writer would: read, change, update,
// again on a conflict. A Database already gone is left alone.
func edit(c client.Client, key client.ObjectKey, change func(*learnv1alpha1.Database)) error {
	for range 10 {
		var db learnv1alpha1.Database
		if err := c.Get(context.Background(), key, &db); err != nil {
			return client.IgnoreNotFound(err)
		}
		change(&db)
		err := c.Update(context.Background(), &db)
		if err == nil || apierrors.IsNotFound(err) {
			return nil
		}
		if !apierrors.IsConflict(err) {
			return fmt.Errorf("update Database %s: %w", key.Name, err)
		}
	}
	return fmt.Errorf("update Database %s: conflicts ten times in a row", key.Name)
}

func withFinalizer(f string) func(*learnv1alpha1.Database) {
	return func(db *learnv1alpha1.Database) {
		if !slices.Contains(db.Finalizers, f) {
			db.Finalizers = append(db.Finalizers, f)
		}
	}
}

func addFinalizer(t *testing.T, c client.Client, key client.ObjectKey, f string) {
	t.Helper()
	if err := edit(c, key, withFinalizer(f)); err != nil {
		t.Fatal(err)
	}
}

func removeFinalizer(t *testing.T, c client.Client, key client.ObjectKey, f string) {
	t.Helper()
	err := edit(c, key, func(db *learnv1alpha1.Database) {
		db.Finalizers = slices.DeleteFunc(db.Finalizers, func(x string) bool { return x == f })
	})
	if err != nil {
		t.Error(err)
	}
}

func annotate(t *testing.T, c client.Client, key client.ObjectKey, value string) {
	t.Helper()
	err := edit(c, key, func(db *learnv1alpha1.Database) {
		if db.Annotations == nil {
			db.Annotations = map[string]string{}
		}
		db.Annotations["lab.check/poke"] = value
	})
	if err != nil {
		t.Fatal(err)
	}
}
