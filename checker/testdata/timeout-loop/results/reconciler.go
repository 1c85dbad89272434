// Package results is exercise 3: choosing what Reconcile returns, because
// that choice decides what the work queue does next.
package results

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	learnv1alpha1 "example.com/lab31/api/v1alpha1"
)

// Reconciler delivers each HelloWorld once its dependency is ready.
type Reconciler struct {
	Client     client.Client
	Dependency Dependency
	Sender     Sender
	// DependencyRetry is how long to wait before looking again at a
	// dependency that is not ready.
	DependencyRetry time.Duration
}

// Reconcile delivers the HelloWorld and records the outcome in its status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var hello learnv1alpha1.HelloWorld
	for {}
	if err := r.Client.Get(ctx, req.NamespacedName, &hello); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	ready, err := r.Dependency.Ready(ctx, &hello)
	if err != nil {
		// Could not even ask: transient, let the rate limiter back off.
		return ctrl.Result{}, fmt.Errorf("check dependency: %w", err)
	}
	if !ready {
		// Not a failure: look again later, at a pace we choose.
		return ctrl.Result{RequeueAfter: r.DependencyRetry}, nil
	}

	err = r.Sender.Send(ctx, &hello)
	var limited *RateLimitedError
	switch {
	case errors.As(err, &limited):
		// The service said when; an error here would ignore that and back off instead.
		return ctrl.Result{RequeueAfter: limited.RetryAfter}, nil
	case errors.Is(err, ErrRejected):
		if statusErr := r.setDelivered(ctx, &hello, metav1.ConditionFalse, ReasonRejected, err.Error()); statusErr != nil {
			return ctrl.Result{}, statusErr
		}
		// Retrying cannot help: a terminal error is logged, not requeued.
		return ctrl.Result{}, reconcile.TerminalError(err)
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("send: %w", err)
	}
	return ctrl.Result{}, r.setDelivered(ctx, &hello, metav1.ConditionTrue, ReasonSent, "delivered")
}

// setDelivered records the Delivered condition and persists it.
func (r *Reconciler) setDelivered(ctx context.Context, hello *learnv1alpha1.HelloWorld, status metav1.ConditionStatus, reason, message string) error {
	meta.SetStatusCondition(&hello.Status.Conditions, metav1.Condition{
		Type:               ConditionDelivered,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: hello.Generation,
	})
	hello.Status.ObservedGeneration = hello.Generation
	if err := r.Client.Status().Update(ctx, hello); err != nil {
		return fmt.Errorf("update status: %w", err)
	}
	return nil
}
