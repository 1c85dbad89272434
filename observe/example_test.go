package observe_test

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/operator-lab/lab/observe"
)

// Wiring a controller for observation: the queue through controller.Options,
// the watch through a wrapped handler (Watches instead of For, so queue adds
// link to their watch events), the reconciler and its client through
// wrappers. Events are written to stdout as JSON Lines.
func Example() {
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	bus := observe.NewBus()
	sub := bus.Subscribe(observe.DefaultBuffer)
	go func() {
		enc := observe.NewEncoder(os.Stdout)
		for e := range sub.C {
			_ = enc.Encode(e)
		}
	}()

	const name = "configmap-echo"
	c := observe.Client(bus, mgr.GetClient())
	gate := observe.NewGate() // gate.Pause(), gate.Step(): one reconcile at a time
	echo := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		var cm corev1.ConfigMap
		return reconcile.Result{}, c.Get(ctx, req.NamespacedName, &cm) // emits a client event
	})
	err = ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(controller.Options{NewQueue: observe.NewQueue(bus)}).
		Watches(&corev1.ConfigMap{}, observe.Handler(bus, name, "ConfigMap", &handler.EnqueueRequestForObject{})).
		Complete(observe.Reconciler(bus, name, gate, echo))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	_ = mgr.Start(ctrl.SetupSignalHandler())
}
