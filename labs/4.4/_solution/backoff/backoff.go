// Package backoff is exercise 4: exponential backoff that cannot overflow,
// with the attempt count kept where a watch event cannot reset it.
package backoff

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// Delay returns the wait before retrying after attempt n failed: n counts
// from 0, and a negative n counts as 0 (Base).
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
	// Now is the clock (default time.Now).
	Now func() time.Time
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Reconcile tries to provision; failure number status.retries waits
// Policy.Delay(retries-1) — Base, 2·Base, 4·Base … — until
// status.nextRetryTime, as the reference operator does.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var db learnv1alpha1.Database
	if err := r.Client.Get(ctx, req.NamespacedName, &db); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if db.Status.Endpoint != "" {
		return ctrl.Result{}, nil
	}
	if next := db.Status.NextRetryTime; next != nil {
		if wait := next.Sub(r.now()); wait > 0 {
			// Woken early (a watch event): wait out the persisted backoff.
			return ctrl.Result{RequeueAfter: wait}, nil
		}
	}
	endpoint, err := r.System.Provision(ctx, external.Key(db.Namespace, db.Name), db.Spec.DatabaseName)
	if err != nil {
		// The count lives in the status, not in memory or in the work queue's
		// rate limiter: a watch event (someone edits a label) must not reset
		// it, and neither must a restart.
		db.Status.Retries++
		delay := r.Policy.Delay(int(db.Status.Retries) - 1)
		db.Status.NextRetryTime = ptr(metav1.NewMicroTime(r.now().Add(delay)))
		if err := r.Client.Status().Update(ctx, &db); err != nil {
			return ctrl.Result{}, fmt.Errorf("record attempt: %w", err)
		}
		return ctrl.Result{RequeueAfter: delay}, nil
	}
	// Success resets the backoff.
	db.Status.Endpoint, db.Status.Retries, db.Status.NextRetryTime = endpoint, 0, nil
	if err := r.Client.Status().Update(ctx, &db); err != nil {
		return ctrl.Result{}, fmt.Errorf("record endpoint: %w", err)
	}
	return ctrl.Result{}, nil
}

func ptr[T any](v T) *T { return &v }
