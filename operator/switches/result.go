package switches

import (
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// NotDone turns "not done yet / failed because of err" into the Reconcile
// return the requeue switch asks for. delay is used by requeue=after only
// (RequeueAfter must come with a nil error: controller-runtime ignores it
// next to an error). With requeue=terminal the caller is also expected to
// mark the object Failed.
func (v Values) NotDone(err error, delay time.Duration) (reconcile.Result, error) {
	switch v.Requeue {
	case RequeueRequeue:
		// Deprecated since controller-runtime v0.21, kept to show what it does:
		// the same rate-limited re-add as returning an error, not an immediate retry.
		return reconcile.Result{Requeue: true}, nil //nolint:staticcheck // demonstrating the deprecated field on purpose
	case RequeueAfter:
		return reconcile.Result{RequeueAfter: delay}, nil
	case RequeueTerminal:
		return reconcile.Result{}, reconcile.TerminalError(err)
	default:
		return reconcile.Result{}, fmt.Errorf("not done yet: %w", err)
	}
}
