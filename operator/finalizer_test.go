package operator_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator"
	"github.com/operator-lab/lab/operator/api/v1alpha1"
	"github.com/operator-lab/lab/operator/breaker"
	"github.com/operator-lab/lab/operator/internal/optest"
	"github.com/operator-lab/lab/operator/world"
)

// TestDeletingADatabaseDeprovisionsItFirst deletes a Ready Database while
// the external system is down: the finalizer keeps the object while the
// deprovision fails and is retried; once the system is back the external
// database is dropped, exactly once, and only then is the object gone.
func TestDeletingADatabaseDeprovisionsItFirst(t *testing.T) {
	t.Parallel()
	env := optest.Start(t, optest.Options{Lab: operator.Lab44, Set: "timescale=100"})
	ctx := context.Background()
	db := createDatabase(t, env, "orders")
	key := env.Namespace + "/orders"
	env.WaitFor(t, waitLong, "phase Ready", func(evs []observe.Event) bool { return reachedPhase(evs, key, "Ready", 0) })
	if err := env.Client.Get(ctx, clientKey(env.Namespace, "orders"), db); err != nil {
		t.Fatal(err)
	}
	if !controllerutil.ContainsFinalizer(db, v1alpha1.DatabaseFinalizer) {
		t.Fatalf("a Ready Database has finalizers %v, want %s", db.Finalizers, v1alpha1.DatabaseFinalizer)
	}
	if n := env.Operator.External.Provisioned(); n != 1 {
		t.Fatalf("%d databases provisioned, want 1", n)
	}

	if err := env.Switches.Set("external", "down"); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, db); err != nil {
		t.Fatal(err)
	}
	deprovisions := func(evs []observe.Event, outcome string) int {
		n := 0
		for _, e := range evs {
			if e.Kind == observe.KindExternal && e.Key == key && e.ExternalCall().Op == world.OpDeprovision && e.ExternalCall().Outcome == outcome {
				n++
			}
		}
		return n
	}
	env.WaitFor(t, waitLong, "two failed deprovisions", func(evs []observe.Event) bool {
		return deprovisions(evs, world.OutcomeUnavailable) >= 2
	})
	if err := env.Client.Get(ctx, clientKey(env.Namespace, "orders"), db); err != nil {
		t.Fatalf("the Database went while its external database could not be dropped: %v", err)
	}
	if db.DeletionTimestamp.IsZero() || !controllerutil.ContainsFinalizer(db, v1alpha1.DatabaseFinalizer) {
		t.Fatalf("while deprovisioning fails: deletionTimestamp %v, finalizers %v", db.DeletionTimestamp, db.Finalizers)
	}

	if err := env.Switches.Set("external", "healthy"); err != nil {
		t.Fatal(err)
	}
	events := env.WaitFor(t, waitLong, "a deprovision that succeeds", func(evs []observe.Event) bool {
		return deprovisions(evs, world.OutcomeOK) >= 1
	})
	gone := func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(env.Client.Get(ctx, clientKey(env.Namespace, "orders"), db)), nil
	}
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, waitLong, true, gone); err != nil {
		t.Fatalf("the Database is still there after its deprovision: %v\n%s", db.Finalizers, optest.Dump(events))
	}
	events = env.Recorder.Events()
	if n := deprovisions(events, world.OutcomeOK); n != 1 {
		t.Errorf("%d successful deprovisions, want 1\n%s", n, optest.Dump(events))
	}
	if n := env.Operator.External.Provisioned(); n != 0 {
		t.Errorf("%d databases still provisioned after the delete, want 0", n)
	}
	// Every failed deprovision was an error for the queue to retry, not a
	// success that would have dropped the retry.
	var results []string
	for _, e := range events {
		if e.Kind == observe.KindReconcileEnd && e.Key == key && slices.ContainsFunc(events, func(x observe.Event) bool {
			return x.Kind == observe.KindExternal && x.ReconcileID == e.ReconcileID && x.ExternalCall().Op == world.OpDeprovision &&
				x.ExternalCall().Outcome != world.OutcomeOK
		}) {
			results = append(results, e.Result)
		}
	}
	for _, r := range results {
		if r != observe.ResultError {
			t.Errorf("a reconcile whose deprovision failed ended %q, want %q", r, observe.ResultError)
		}
	}
	// The lesson quotes these errors: the system's own while the breaker
	// lets calls through, the breaker's once it has opened.
	failed := 0
	for _, e := range events {
		if e.Kind != observe.KindReconcileEnd || e.Key != key || !strings.HasPrefix(e.Error, "deprovision ") {
			continue
		}
		failed++
		if !strings.HasSuffix(e.Error, ": "+world.ErrUnavailable.Error()) && !strings.HasSuffix(e.Error, ": "+breaker.ErrOpen.Error()) {
			t.Errorf("a failed deprovision ended with %q, want \"deprovision …: %v\" or \"…: %v\"", e.Error, world.ErrUnavailable, breaker.ErrOpen)
		}
	}
	if failed < 2 {
		t.Errorf("%d reconciles ended in a deprovision error, want at least 2\n%s", failed, optest.Dump(events))
	}
}
