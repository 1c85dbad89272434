// Package finalizer is exercise 8: a deleted Database's database in the
// external system is deprovisioned before the object goes, through a
// finalizer.
package finalizer

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	learnv1alpha1 "example.com/lab44/api/v1alpha1"
	"example.com/lab44/external"
)

// Reconciler provisions each Database in the external system and, once the
// Database is deleted, deprovisions it before the object may go.
type Reconciler struct {
	Client client.Client
	System external.System
}

// Reconcile finalizes a Database that is being deleted; any other gets the
// finalizer first, then its database.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var db learnv1alpha1.Database
	if err := r.Client.Get(ctx, req.NamespacedName, &db); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !db.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, &db)
	}
	if err := r.ensureFinalizer(ctx, &db); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.provision(ctx, &db)
}

// ensureFinalizer puts learnv1alpha1.DatabaseFinalizer on db and saves it,
// keeping every finalizer other controllers put there.
func (r *Reconciler) ensureFinalizer(ctx context.Context, db *learnv1alpha1.Database) error {
	if !controllerutil.AddFinalizer(db, learnv1alpha1.DatabaseFinalizer) {
		return nil // there already
	}
	// Update sends db's resourceVersion: if db is stale, the API server
	// answers Conflict instead of dropping what changed meanwhile, and the
	// queue's retry reads afresh.
	if err := r.Client.Update(ctx, db); err != nil {
		return fmt.Errorf("add finalizer: %w", err)
	}
	return nil
}

// finalize runs for a Database being deleted (its deletionTimestamp is set):
// the API server keeps the object until the last finalizer is removed.
func (r *Reconciler) finalize(ctx context.Context, db *learnv1alpha1.Database) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(db, learnv1alpha1.DatabaseFinalizer) {
		return ctrl.Result{}, nil // ours is done; another finalizer holds it
	}
	if err := r.System.Deprovision(ctx, external.Key(db.Namespace, db.Name)); err != nil {
		// The finalizer stays, so the object stays: the queue retries.
		return ctrl.Result{}, fmt.Errorf("deprovision: %w", err)
	}
	controllerutil.RemoveFinalizer(db, learnv1alpha1.DatabaseFinalizer)
	if err := r.Client.Update(ctx, db); err != nil {
		// A retry deprovisions again, which finds nothing to drop.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return ctrl.Result{}, nil
}

// provision makes sure db's database exists in the external system and
// records its endpoint. It is given: the exercise is what comes before it
// and after it.
func (r *Reconciler) provision(ctx context.Context, db *learnv1alpha1.Database) error {
	endpoint, err := r.System.Provision(ctx, external.Key(db.Namespace, db.Name), db.Spec.DatabaseName)
	if err != nil {
		return fmt.Errorf("provision: %w", err)
	}
	if db.Status.Endpoint == endpoint {
		return nil
	}
	db.Status.Endpoint = endpoint
	if err := r.Client.Status().Update(ctx, db); err != nil {
		return fmt.Errorf("record the endpoint: %w", err)
	}
	return nil
}
