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
//
// TODO(lab): add the way out of Failed, and how a Ready Database gets
// updated (see the instructions for the full diagram).
var transitions = map[learnv1alpha1.Phase][]learnv1alpha1.Phase{
	"":                              {learnv1alpha1.PhasePending},
	learnv1alpha1.PhasePending:      {learnv1alpha1.PhaseProvisioning},
	learnv1alpha1.PhaseProvisioning: {learnv1alpha1.PhaseConfiguring, learnv1alpha1.PhaseFailed},
	learnv1alpha1.PhaseConfiguring:  {learnv1alpha1.PhaseDeploying, learnv1alpha1.PhaseFailed},
	learnv1alpha1.PhaseDeploying:    {learnv1alpha1.PhaseVerifying, learnv1alpha1.PhaseFailed},
	learnv1alpha1.PhaseVerifying:    {learnv1alpha1.PhaseReady, learnv1alpha1.PhaseFailed},
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
//
// TODO(lab): this draft runs every step in one go and records only the end,
// through a transition that is not even valid ("" → Ready). Make it move one
// phase per reconcile with moveTo (each phase persisted), turn a failed step
// into the Failed phase (fail) and start over after RetryDelay, and take a
// Ready Database whose spec changed through Updating.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var db learnv1alpha1.Database
	if err := r.Client.Get(ctx, req.NamespacedName, &db); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if db.Status.Phase == learnv1alpha1.PhaseReady {
		return ctrl.Result{}, nil
	}
	endpoint, err := r.System.Provision(ctx, db.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	db.Status.Endpoint = endpoint
	for _, do := range []func(context.Context, string) error{r.System.Configure, r.System.Deploy, r.System.Verify} {
		if err := do(ctx, db.Name); err != nil {
			return ctrl.Result{}, err
		}
	}
	db.Status.Phase = learnv1alpha1.PhaseReady
	if err := r.Client.Status().Update(ctx, &db); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
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
