// Package dependency is exercise 2: the external system checked before any
// work, an outage reported as the Failed phase with a condition, and waited
// out with RequeueAfter — not with errors.
package dependency

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	learnv1alpha1 "example.com/lab44/api/v1alpha1"
	"example.com/lab44/external"
)

// Reconciler runs a Database's Provisioning step once the external system
// answers its health check: Pending → Provisioning → Configuring, with
// Failed while the system is down.
type Reconciler struct {
	Client client.Client
	System external.System
	// RetryInterval is how long to wait before asking a failed system again.
	RetryInterval time.Duration
}

// Reconcile checks the dependency, records it, and provisions when it can.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var db learnv1alpha1.Database
	if err := r.Client.Get(ctx, req.NamespacedName, &db); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	switch db.Status.Phase {
	case "":
		return ctrl.Result{}, r.persist(ctx, &db, learnv1alpha1.PhasePending)
	case learnv1alpha1.PhasePending:
		return ctrl.Result{}, r.persist(ctx, &db, learnv1alpha1.PhaseProvisioning)
	case learnv1alpha1.PhaseProvisioning, learnv1alpha1.PhaseFailed:
		// handled below
	default:
		return ctrl.Result{}, nil // the later phases are exercise 1's
	}

	// TODO(lab): ask r.System.HealthCheck before any work. While it fails,
	// record the outage with r.unavailable (phase Failed,
	// ExternalSystemAvailable=False reason Unavailable) and come back after
	// RetryInterval without an error; once it answers, set
	// ExternalSystemAvailable=True (reason Available), and from Failed
	// move back to Provisioning. This draft calls Provision blindly and
	// returns the error.
	if db.Status.Phase == learnv1alpha1.PhaseFailed {
		return ctrl.Result{}, r.persist(ctx, &db, learnv1alpha1.PhaseProvisioning)
	}
	endpoint, err := r.System.Provision(ctx, external.Key(db.Namespace, db.Name), db.Spec.DatabaseName)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("provision: %w", err)
	}
	db.Status.Endpoint = endpoint
	return ctrl.Result{}, r.persist(ctx, &db, learnv1alpha1.PhaseConfiguring)
}

// unavailable records an outage: phase Failed with
// ExternalSystemAvailable=False (Unavailable), written only when something
// changed, and a calm RequeueAfter with no error.
func (r *Reconciler) unavailable(ctx context.Context, db *learnv1alpha1.Database, cause error) (ctrl.Result, error) {
	changed := setCondition(db, learnv1alpha1.ConditionExternalSystemAvailable, metav1.ConditionFalse, learnv1alpha1.ReasonUnavailable, cause.Error())
	changed = setCondition(db, learnv1alpha1.ConditionReady, metav1.ConditionFalse, learnv1alpha1.ReasonUnavailable, "the external system is not available") || changed
	if changed || db.Status.Phase != learnv1alpha1.PhaseFailed {
		if err := r.persist(ctx, db, learnv1alpha1.PhaseFailed); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: r.RetryInterval}, nil
}

// persist moves the Database to phase (a move learnv1alpha1.CanTransition
// allows) and writes its status.
func (r *Reconciler) persist(ctx context.Context, db *learnv1alpha1.Database, phase learnv1alpha1.Phase) error {
	if !learnv1alpha1.CanTransition(db.Status.Phase, phase) {
		return fmt.Errorf("phase %q → %q is not in the state machine", db.Status.Phase, phase)
	}
	db.Status.Phase = phase
	if err := r.Client.Status().Update(ctx, db); err != nil {
		return fmt.Errorf("update status: %w", err)
	}
	return nil
}

// setCondition sets a condition in memory and reports whether it changed
// (and so needs writing).
func setCondition(db *learnv1alpha1.Database, typ string, status metav1.ConditionStatus, reason, message string) bool {
	return meta.SetStatusCondition(&db.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: db.Generation,
	})
}
