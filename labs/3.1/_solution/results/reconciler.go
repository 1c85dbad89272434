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

// Reconciler delivers each HelloWorld once its dependency is ready, and
// reports the outcome with the API's conditions (api/v1alpha1/conditions.go),
// as the reference operator does.
type Reconciler struct {
	Client     client.Client
	Dependency Dependency
	Sender     Sender
	// DependencyRetry is how long to wait before looking again at a
	// dependency that is not ready. It is not watched: no event will say
	// when it becomes ready.
	DependencyRetry time.Duration
}

// Reconcile delivers the HelloWorld and records the outcome in its status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var hello learnv1alpha1.HelloWorld
	if err := r.Client.Get(ctx, req.NamespacedName, &hello); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	ready, err := r.Dependency.Ready(ctx, &hello)
	if err != nil {
		// Could not even ask: transient, let the rate limiter back off.
		return ctrl.Result{}, fmt.Errorf("check dependency: %w", err)
	}
	if !ready {
		setCondition(&hello, learnv1alpha1.ConditionDependencyAvailable, metav1.ConditionFalse, learnv1alpha1.ReasonUnavailable, "the dependency is not ready")
		setCondition(&hello, learnv1alpha1.ConditionReady, metav1.ConditionFalse, learnv1alpha1.ReasonUnavailable, "waiting for the dependency")
		if err := r.updateStatus(ctx, &hello); err != nil {
			return ctrl.Result{}, err
		}
		// Not a failure, and nothing we watch will say when it changes:
		// look again later, at a pace we choose.
		return ctrl.Result{RequeueAfter: r.DependencyRetry}, nil
	}
	setCondition(&hello, learnv1alpha1.ConditionDependencyAvailable, metav1.ConditionTrue, learnv1alpha1.ReasonAvailable, "the dependency is ready")

	err = r.Sender.Send(ctx, &hello)
	var limited *RateLimitedError
	switch {
	case errors.As(err, &limited):
		// The service said when; an error here would ignore that and back off instead.
		return ctrl.Result{RequeueAfter: limited.RetryAfter}, nil
	case errors.Is(err, ErrRejected):
		// The spec can never work as written.
		setCondition(&hello, learnv1alpha1.ConditionFailed, metav1.ConditionTrue, learnv1alpha1.ReasonInvalidSpec, err.Error())
		setCondition(&hello, learnv1alpha1.ConditionReady, metav1.ConditionFalse, learnv1alpha1.ReasonInvalidSpec, err.Error())
		if statusErr := r.updateStatus(ctx, &hello); statusErr != nil {
			return ctrl.Result{}, statusErr
		}
		// Retrying cannot help: a terminal error is logged, not requeued;
		// the user's fix to the spec is the next event.
		return ctrl.Result{}, reconcile.TerminalError(err)
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("send: %w", err)
	}

	setCondition(&hello, learnv1alpha1.ConditionReady, metav1.ConditionTrue, learnv1alpha1.ReasonReconciled, "delivered")
	if meta.IsStatusConditionTrue(hello.Status.Conditions, learnv1alpha1.ConditionFailed) {
		setCondition(&hello, learnv1alpha1.ConditionFailed, metav1.ConditionFalse, learnv1alpha1.ReasonRecovered, "delivered again")
	}
	hello.Status.ObservedGeneration = hello.Generation
	return ctrl.Result{}, r.updateStatus(ctx, &hello)
}

// setCondition sets one condition on hello, in memory, stamped with the
// generation it describes; updateStatus persists it.
func setCondition(hello *learnv1alpha1.HelloWorld, condType string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&hello.Status.Conditions, metav1.Condition{
		Type:               condType,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: hello.Generation,
	})
}

// updateStatus writes hello's status (the conditions set so far).
func (r *Reconciler) updateStatus(ctx context.Context, hello *learnv1alpha1.HelloWorld) error {
	if err := r.Client.Status().Update(ctx, hello); err != nil {
		return fmt.Errorf("update status: %w", err)
	}
	return nil
}
