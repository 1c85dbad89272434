// Package statemachine is exercise 1: a multi-phase reconcile as a state
// machine with valid transitions only, each persisted.
package statemachine

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	learnv1alpha1 "example.com/lab44/api/v1alpha1"
	"example.com/lab44/external"
)

// ConditionReady is the condition that mirrors the phase.
const ConditionReady = "Ready"

// transitions lists where each phase may go. "" is a Database nobody has
// reconciled yet.
var transitions = map[learnv1alpha1.Phase][]learnv1alpha1.Phase{
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

// CanTransition reports whether a Database may move from one phase to another.
func CanTransition(from, to learnv1alpha1.Phase) bool {
	return slices.Contains(transitions[from], to)
}

// Reconciler moves each Database one phase per reconcile; persisting the
// new phase triggers the next reconcile through the watch.
type Reconciler struct {
	Client client.Client
	System external.System
	// RetryDelay is how long a Database stays Failed before it starts over.
	RetryDelay time.Duration
}

// Reconcile performs the current phase's step and records the next phase.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var db learnv1alpha1.Database
	if err := r.Client.Get(ctx, req.NamespacedName, &db); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	phase := db.Status.Phase
	switch phase {
	case "":
		return r.moveTo(ctx, &db, learnv1alpha1.PhasePending, "created")
	case learnv1alpha1.PhasePending:
		return r.moveTo(ctx, &db, learnv1alpha1.PhaseProvisioning, "provisioning started")
	case learnv1alpha1.PhaseProvisioning:
		endpoint, err := r.System.Provision(ctx, db.Name)
		if err != nil {
			return r.fail(ctx, &db, err)
		}
		db.Status.Endpoint = endpoint
		return r.moveTo(ctx, &db, learnv1alpha1.PhaseConfiguring, "provisioned at "+endpoint)
	case learnv1alpha1.PhaseConfiguring:
		return r.step(ctx, &db, r.System.Configure, learnv1alpha1.PhaseDeploying)
	case learnv1alpha1.PhaseDeploying:
		return r.step(ctx, &db, r.System.Deploy, learnv1alpha1.PhaseVerifying)
	case learnv1alpha1.PhaseVerifying:
		return r.step(ctx, &db, r.System.Verify, learnv1alpha1.PhaseReady)
	case learnv1alpha1.PhaseReady:
		if db.Generation != db.Status.ObservedGeneration {
			return r.moveTo(ctx, &db, learnv1alpha1.PhaseUpdating, "spec changed")
		}
		return ctrl.Result{}, nil
	case learnv1alpha1.PhaseUpdating:
		return r.moveTo(ctx, &db, learnv1alpha1.PhaseConfiguring, "applying the new spec")
	case learnv1alpha1.PhaseFailed:
		// Entering Failed wakes us at once (the status changed): wait out
		// the rest of RetryDelay before starting over.
		if since := db.Status.PhaseSince; since != nil {
			if wait := r.RetryDelay - time.Since(since.Time); wait > 0 {
				return ctrl.Result{RequeueAfter: wait}, nil
			}
		}
		db.Status.FailedPhase = ""
		return r.moveTo(ctx, &db, learnv1alpha1.PhasePending, "retrying")
	default:
		return ctrl.Result{}, fmt.Errorf("unknown phase %q", phase)
	}
}

// step runs one external step and moves on, or fails.
func (r *Reconciler) step(ctx context.Context, db *learnv1alpha1.Database, do func(context.Context, string) error, next learnv1alpha1.Phase) (ctrl.Result, error) {
	if err := do(ctx, db.Name); err != nil {
		return r.fail(ctx, db, err)
	}
	return r.moveTo(ctx, db, next, string(db.Status.Phase)+" done")
}

// fail records the failed phase and comes back after RetryDelay.
func (r *Reconciler) fail(ctx context.Context, db *learnv1alpha1.Database, cause error) (ctrl.Result, error) {
	db.Status.FailedPhase = db.Status.Phase
	if _, err := r.moveTo(ctx, db, learnv1alpha1.PhaseFailed, cause.Error()); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: r.RetryDelay}, nil
}

// moveTo checks and persists a transition, with the Ready condition and
// observedGeneration describing it.
func (r *Reconciler) moveTo(ctx context.Context, db *learnv1alpha1.Database, to learnv1alpha1.Phase, message string) (ctrl.Result, error) {
	from := db.Status.Phase
	if !CanTransition(from, to) {
		return ctrl.Result{}, fmt.Errorf("invalid transition %q → %q", from, to)
	}
	status := metav1.ConditionFalse
	if to == learnv1alpha1.PhaseReady {
		status = metav1.ConditionTrue
	}
	now := metav1.Now()
	db.Status.Phase, db.Status.PhaseSince = to, &now
	db.Status.ObservedGeneration = db.Generation
	meta.SetStatusCondition(&db.Status.Conditions, metav1.Condition{
		Type: ConditionReady, Status: status, Reason: string(to), Message: message, ObservedGeneration: db.Generation,
	})
	if err := r.Client.Status().Update(ctx, db); err != nil {
		return ctrl.Result{}, fmt.Errorf("persist phase %s: %w", to, err)
	}
	return ctrl.Result{}, nil
}
