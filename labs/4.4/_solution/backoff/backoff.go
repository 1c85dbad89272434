// Package backoff is exercise 4: exponential backoff that cannot overflow,
// with the attempt count kept where a watch event cannot reset it.
package backoff

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	learnv1alpha1 "example.com/lab44/api/v1alpha1"
	"example.com/lab44/external"
)

// Policy is exponential backoff: Base·2ⁿ for attempt n (from 0), capped at Max.
type Policy struct {
	Base time.Duration
	Max  time.Duration
}

// Delay returns the wait before retrying after attempt n failed.
func (p Policy) Delay(n int) time.Duration {
	if n < 0 {
		n = 0
	}
	// Stop doubling before Base<<n can overflow (or pass Max): the shift
	// is applied one step at a time and never beyond the cap.
	d := p.Base
	for i := 0; i < n; i++ {
		if d >= p.Max/2 {
			return p.Max
		}
		d *= 2
	}
	return min(d, p.Max)
}

// Reconciler provisions a Database, backing off between failed attempts.
type Reconciler struct {
	Client client.Client
	System external.System
	Policy Policy
}

// Reconcile tries to provision; a failure waits Policy.Delay(attempts).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var db learnv1alpha1.Database
	if err := r.Client.Get(ctx, req.NamespacedName, &db); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if db.Status.Endpoint != "" {
		return ctrl.Result{}, nil
	}
	endpoint, err := r.System.Provision(ctx, db.Name)
	if err != nil {
		// The count lives in the status, not in memory or in the work queue's
		// rate limiter: a watch event (someone edits a label) must not reset
		// it, and neither must a restart.
		delay := r.Policy.Delay(int(db.Status.Attempts))
		db.Status.Attempts++
		if err := r.Client.Status().Update(ctx, &db); err != nil {
			return ctrl.Result{}, fmt.Errorf("record attempt: %w", err)
		}
		return ctrl.Result{RequeueAfter: delay}, nil
	}
	db.Status.Endpoint, db.Status.Attempts = endpoint, 0 // success resets the backoff
	if err := r.Client.Status().Update(ctx, &db); err != nil {
		return ctrl.Result{}, fmt.Errorf("record endpoint: %w", err)
	}
	return ctrl.Result{}, nil
}
