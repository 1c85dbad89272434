// Package together is exercise 7: the whole reconcile — state machine,
// dependency check, circuit breaker, backoff, idempotent operations and
// status — built from your earlier exercises.
package together

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	learnv1alpha1 "example.com/lab44/api/v1alpha1"
	"example.com/lab44/backoff"
	"example.com/lab44/breaker"
	"example.com/lab44/external"
	"example.com/lab44/idempotency"
	"example.com/lab44/statemachine"
)

// Conditions this reconciler maintains.
const (
	ConditionReady         = statemachine.ConditionReady
	ConditionExternalReady = "ExternalReady"
)

// CredentialsSecret names the Secret holding a Database's credentials.
func CredentialsSecret(db *learnv1alpha1.Database) string { return db.Name + "-credentials" }

// Reconciler brings a Database to Ready through an unreliable external
// system. It is set up to ignore status-only changes, so it asks for every
// next reconcile itself.
type Reconciler struct {
	Client  client.Client
	System  external.System
	Breaker *breaker.Breaker
	Backoff backoff.Policy
	// HealthRetry is how long to wait for an unhealthy system.
	HealthRetry time.Duration
}

// Reconcile moves the Database through its phases as far as it can.
//
// TODO(lab): this draft has the state machine but none of the defences.
// Check the external system's health first (ExternalReady condition, wait
// HealthRetry, no error); ask r.Breaker before every external call (open:
// wait, do not call) and tell it the outcome; count failures in
// status.attempts and back off with r.Backoff — without returning an error,
// which would make the controller ignore RequeueAfter; take a Ready
// Database whose spec changed through Updating.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var db learnv1alpha1.Database
	if err := r.Client.Get(ctx, req.NamespacedName, &db); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if db.Status.Phase == learnv1alpha1.PhaseReady {
		return ctrl.Result{}, nil
	}
	for db.Status.Phase != learnv1alpha1.PhaseReady {
		next, step := r.plan(&db)
		if step != nil {
			if err := step(ctx, &db); err != nil {
				return ctrl.Result{RequeueAfter: r.Backoff.Delay(int(db.Status.Attempts))}, err
			}
		}
		if err := r.moveTo(ctx, &db, next, string(next)); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// plan returns the phase after the current one and the step that gets there
// (nil when moving on needs no external call).
func (r *Reconciler) plan(db *learnv1alpha1.Database) (learnv1alpha1.Phase, func(context.Context, *learnv1alpha1.Database) error) {
	call := func(do func(context.Context, string) error) func(context.Context, *learnv1alpha1.Database) error {
		return func(ctx context.Context, db *learnv1alpha1.Database) error { return do(ctx, db.Name) }
	}
	switch db.Status.Phase {
	case "", learnv1alpha1.PhaseFailed:
		return learnv1alpha1.PhasePending, nil
	case learnv1alpha1.PhasePending:
		return learnv1alpha1.PhaseProvisioning, nil
	case learnv1alpha1.PhaseProvisioning:
		return learnv1alpha1.PhaseConfiguring, r.provision
	case learnv1alpha1.PhaseConfiguring:
		return learnv1alpha1.PhaseDeploying, call(r.System.Configure)
	case learnv1alpha1.PhaseDeploying:
		return learnv1alpha1.PhaseVerifying, call(r.System.Deploy)
	case learnv1alpha1.PhaseVerifying:
		return learnv1alpha1.PhaseReady, call(r.System.Verify)
	default: // Updating
		return learnv1alpha1.PhaseConfiguring, nil
	}
}

// provision creates the instance and its credentials, both idempotently.
func (r *Reconciler) provision(ctx context.Context, db *learnv1alpha1.Database) error {
	endpoint, err := r.System.Provision(ctx, db.Name)
	if err != nil {
		return err
	}
	db.Status.Endpoint = endpoint
	return idempotency.EnsureSecret(ctx, r.Client, db, CredentialsSecret(db), map[string][]byte{
		"endpoint": []byte(endpoint), "username": []byte(db.Name),
	})
}

// moveTo persists a valid transition with its condition and observedGeneration.
func (r *Reconciler) moveTo(ctx context.Context, db *learnv1alpha1.Database, to learnv1alpha1.Phase, message string) error {
	if !statemachine.CanTransition(db.Status.Phase, to) {
		return fmt.Errorf("invalid transition %q → %q", db.Status.Phase, to)
	}
	status := metav1.ConditionFalse
	if to == learnv1alpha1.PhaseReady {
		status = metav1.ConditionTrue
	}
	now := metav1.Now()
	db.Status.Phase, db.Status.PhaseSince, db.Status.ObservedGeneration = to, &now, db.Generation
	meta.SetStatusCondition(&db.Status.Conditions, metav1.Condition{
		Type: ConditionReady, Status: status, Reason: string(to), Message: message, ObservedGeneration: db.Generation,
	})
	if err := r.Client.Status().Update(ctx, db); err != nil {
		return fmt.Errorf("persist phase %s: %w", to, err)
	}
	return nil
}

// setCondition persists a condition when it changes.
func (r *Reconciler) setCondition(ctx context.Context, db *learnv1alpha1.Database, condType string, status metav1.ConditionStatus, reason, message string) error {
	if !meta.SetStatusCondition(&db.Status.Conditions, metav1.Condition{
		Type: condType, Status: status, Reason: reason, Message: message, ObservedGeneration: db.Generation,
	}) {
		return nil
	}
	if err := r.Client.Status().Update(ctx, db); err != nil {
		return fmt.Errorf("update status: %w", err)
	}
	return nil
}
