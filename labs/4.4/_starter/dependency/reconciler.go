// Package dependency is exercise 2: an external dependency checked before
// any work, reported as a condition, and waited for without errors.
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

// The condition this exercise maintains, and its reasons.
const (
	ConditionExternalReady = "ExternalReady"
	ReasonHealthy          = "Healthy"
	ReasonUnavailable      = "ExternalUnavailable"
)

// Reconciler provisions each Database once the external system is healthy.
type Reconciler struct {
	Client client.Client
	System external.System
	// RetryInterval is how long to wait before asking an unhealthy system again.
	RetryInterval time.Duration
}

// Reconcile checks the dependency, records it, and provisions when it can.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var db learnv1alpha1.Database
	if err := r.Client.Get(ctx, req.NamespacedName, &db); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	// TODO(lab): check r.System.Healthy first. While it is down, record the
	// ExternalReady condition (False, reason ExternalUnavailable) and come
	// back after RetryInterval without returning an error; once it is up,
	// record ExternalReady=True (reason Healthy) and carry on.
	changed := false
	if db.Status.Endpoint == "" {
		endpoint, err := r.System.Provision(ctx, db.Name)
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("provision: %w", err)
		}
		db.Status.Endpoint, changed = endpoint, true
	}
	if changed {
		if err := r.Client.Status().Update(ctx, &db); err != nil {
			return ctrl.Result{}, fmt.Errorf("update status: %w", err)
		}
	}
	return ctrl.Result{}, nil
}

// setExternalReady sets the ExternalReady condition in memory and reports
// whether it changed (and so needs writing).
func setExternalReady(db *learnv1alpha1.Database, status metav1.ConditionStatus, reason, message string) bool {
	return meta.SetStatusCondition(&db.Status.Conditions, metav1.Condition{
		Type: ConditionExternalReady, Status: status, Reason: reason, Message: message, ObservedGeneration: db.Generation,
	})
}
