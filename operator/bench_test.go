package operator_test

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator"
	"github.com/operator-lab/lab/operator/database"
	"github.com/operator-lab/lab/operator/internal/optest"
)

// BenchmarkReconcileReadyDatabase measures one reconcile of a Ready Database
// (cache reads of the Database, its Secret and StatefulSet, no writes) with
// the observation layer off and on (observed client and reconciler emitting
// to a bus with one subscriber that keeps up).
func BenchmarkReconcileReadyDatabase(b *testing.B) {
	env := optest.Start(b, optest.Options{Lab: operator.Lab44, Set: "timescale=100"})
	createDatabase(b, env, "bench")
	key := env.Namespace + "/bench"
	env.WaitFor(b, waitLong, "phase Ready", func(evs []observe.Event) bool { return reachedPhase(evs, key, "Ready", 0) })
	req := reconcile.Request{NamespacedName: clientKey(env.Namespace, "bench")}
	mgr := env.Manager

	run := func(b *testing.B, r reconcile.Reconciler) {
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if _, err := r.Reconcile(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("observation=off", func(b *testing.B) {
		run(b, database.New(database.Options{Client: mgr.GetClient(), Scheme: mgr.GetScheme(), Switches: env.Switches, External: env.Operator.External}))
	})
	b.Run("observation=on", func(b *testing.B) {
		bus := observe.NewBus()
		sub := bus.Subscribe(observe.DefaultBuffer)
		drained := make(chan struct{})
		go func() {
			defer close(drained)
			for range sub.C {
			}
		}()
		inner := database.New(database.Options{
			Client: observe.Client(bus, mgr.GetClient()), Scheme: mgr.GetScheme(), Switches: env.Switches,
			External: env.Operator.External, Emitter: bus,
		})
		run(b, observe.Reconciler(bus, database.ControllerName, nil, inner))
		b.StopTimer()
		bus.Close()
		<-drained
		if n := sub.Dropped(); n > 0 {
			b.Logf("%d events dropped", n)
		}
	})
}
