package wiring

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/operator-lab/lab/observe"
)

// Controller describes one controller to register.
type Controller struct {
	// Name is the controller name, used in every event it emits.
	Name string
	// For is the primary kind: its own events enqueue its own key.
	For client.Object
	// Owns are kinds the controller creates with a controller owner
	// reference: their events enqueue the owner.
	Owns []client.Object
	// Reconciler does the work.
	Reconciler reconcile.Reconciler
	// Workers is MaxConcurrentReconciles (at least 1).
	Workers int
	// Emitter receives every event; Gate (optional) pauses reconciles.
	Emitter observe.Emitter
	Gate    *observe.Gate
}

// Setup registers c with mgr.
//
// It spells out what builder.For and builder.Owns do — a Watches with
// EnqueueRequestForObject, and one with EnqueueRequestForOwner(...,
// OnlyControllerOwner()) per owned kind — because each handler is wrapped to
// emit the watch event and link it to the queue add it causes.
func Setup(mgr ctrl.Manager, c Controller) error {
	em := c.Emitter
	if em == nil {
		em = observe.Discard
	}
	workers := max(c.Workers, 1)
	b := ctrl.NewControllerManagedBy(mgr).
		Named(c.Name).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: workers,
			NewQueue:                observe.NewQueue(em),
		})

	forKind, err := kindOf(mgr, c.For)
	if err != nil {
		return err
	}
	b = b.Watches(c.For, observe.Handler(em, c.Name, forKind, &handler.EnqueueRequestForObject{}))
	for _, owned := range c.Owns {
		kind, err := kindOf(mgr, owned)
		if err != nil {
			return err
		}
		enqueueOwner := handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), c.For, handler.OnlyControllerOwner())
		b = b.Watches(owned, observe.Handler(em, c.Name, kind, enqueueOwner))
	}
	if err := b.Complete(observe.Reconciler(em, c.Name, c.Gate, c.Reconciler)); err != nil {
		return fmt.Errorf("set up controller %s: %w", c.Name, err)
	}
	return nil
}

func kindOf(mgr ctrl.Manager, obj client.Object) (string, error) {
	gvk, err := apiutil.GVKForObject(obj, mgr.GetScheme())
	if err != nil {
		return "", fmt.Errorf("the manager's scheme does not know %T (build it with operator/scheme.New): %w", obj, err)
	}
	return gvk.Kind, nil
}
