package world

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/operator-lab/lab/operator/switches"
)

// Workloads the simulator looks after carry this label; the operator sets it
// on the StatefulSets it creates.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "lab-operator"
)

// readyDelay is how long a simulated rollout takes at timescale 1.
const readyDelay = 2 * time.Second

// WorkloadSimulatorName is the controller name of the workload simulator. It
// is not observed: it plays the part of kube-controller-manager and the
// kubelet, and its only visible effect is the StatefulSet status change the
// operator's own watch reports.
const WorkloadSimulatorName = "world-workloads"

// Workloads marks managed StatefulSets ready readyDelay (scaled by the
// timescale) after it first sees a generation that is not rolled out.
type Workloads struct {
	client client.Client
	sw     *switches.Switches

	mu sync.Mutex
	// seen records when each StatefulSet generation was first seen, so the
	// delay runs from the spec change, not from the latest event.
	seen map[seenKey]time.Time
}

type seenKey struct {
	name       types.NamespacedName
	generation int64
}

// SetupWorkloads registers the workload simulator with mgr.
func SetupWorkloads(mgr ctrl.Manager, sw *switches.Switches) error {
	w := &Workloads{client: mgr.GetClient(), sw: sw, seen: map[seenKey]time.Time{}}
	managed := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetLabels()[ManagedByLabel] == ManagedByValue
	})
	err := ctrl.NewControllerManagedBy(mgr).
		Named(WorkloadSimulatorName).
		For(&appsv1.StatefulSet{}, builder.WithPredicates(managed)).
		Complete(w)
	if err != nil {
		return fmt.Errorf("set up the workload simulator: %w", err)
	}
	return nil
}

// Reconcile plays a rollout: once the delay has passed, the StatefulSet's
// status says every replica is updated and ready for its current generation.
func (w *Workloads) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	sts := &appsv1.StatefulSet{}
	if err := w.client.Get(ctx, req.NamespacedName, sts); err != nil {
		if apierrors.IsNotFound(err) {
			w.forget(req.NamespacedName)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	replicas := int32(1)
	if sts.Spec.Replicas != nil {
		replicas = *sts.Spec.Replicas
	}
	st := sts.Status
	if st.ObservedGeneration == sts.Generation && st.ReadyReplicas == replicas &&
		st.UpdatedReplicas == replicas && st.Replicas == replicas {
		return reconcile.Result{}, nil
	}

	if wait := w.remaining(seenKey{req.NamespacedName, sts.Generation}); wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	sts.Status.ObservedGeneration = sts.Generation
	sts.Status.Replicas = replicas
	sts.Status.ReadyReplicas = replicas
	sts.Status.CurrentReplicas = replicas
	sts.Status.UpdatedReplicas = replicas
	sts.Status.AvailableReplicas = replicas
	if err := w.client.Status().Update(ctx, sts); err != nil {
		return reconcile.Result{}, fmt.Errorf("mark StatefulSet %s ready: %w", req.NamespacedName, err)
	}
	return reconcile.Result{}, nil
}

// remaining returns how much of the rollout delay is left for this
// generation, starting the clock the first time the generation is seen.
func (w *Workloads) remaining(k seenKey) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	first, ok := w.seen[k]
	if !ok {
		first = time.Now()
		w.seen[k] = first
	}
	return w.sw.Scale(readyDelay) - time.Since(first)
}

func (w *Workloads) forget(name types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.seen {
		if k.name == name {
			delete(w.seen, k)
		}
	}
}
