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
	// TODO(lab): a merge patch replaces metadata.finalizers whole, with the
	// list of the copy this reconcile read: if that copy is stale, another
	// controller's finalizer added meanwhile is dropped. Save it so that a
	// stale copy fails (a Conflict; the retry reads afresh), and write
	// nothing when the finalizer is there already.
	patch := client.MergeFrom(db.DeepCopy())
	controllerutil.AddFinalizer(db, learnv1alpha1.DatabaseFinalizer)
	if err := r.Client.Patch(ctx, db, patch); err != nil {
		return fmt.Errorf("add finalizer: %w", err)
	}
	return nil
}

// finalize runs for a Database being deleted (its deletionTimestamp is set):
// the API server keeps the object until the last finalizer is removed.
func (r *Reconciler) finalize(ctx context.Context, db *learnv1alpha1.Database) (ctrl.Result, error) {
	// TODO(lab): this draft lets the Database go at once and never calls
	// r.System.Deprovision: its database leaks in the external system.
	// Deprovision first (external.Key(db.Namespace, db.Name)); remove the
	// finalizer only once that succeeded; a failed Deprovision is an error
	// to retry, with the finalizer kept. Do nothing once the finalizer is
	// gone (another controller's finalizer may still hold the object).
	controllerutil.RemoveFinalizer(db, learnv1alpha1.DatabaseFinalizer)
	if err := r.Client.Update(ctx, db); err != nil {
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
