// Package together is exercise 7: the reference operator's whole reconcile
// in your hands — the state machine one phase per call, the health check,
// the circuit breaker, the backoff kept in status, and the idempotent
// credentials Secret — built from your earlier exercises.
package together

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	learnv1alpha1 "example.com/lab44/api/v1alpha1"
	"example.com/lab44/backoff"
	"example.com/lab44/breaker"
	"example.com/lab44/external"
	"example.com/lab44/idempotency"
)

// Reconciler brings a Database to Ready through an unreliable external
// system, one phase per reconcile: each move is a status write, whose watch
// event brings the next reconcile.
type Reconciler struct {
	Client  client.Client
	System  external.System
	Breaker *breaker.Breaker
	Backoff backoff.Policy
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Reconcile performs the current phase's step and moves to the next phase.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var db learnv1alpha1.Database
	if err := r.Client.Get(ctx, req.NamespacedName, &db); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	switch db.Status.Phase {
	case "":
		return r.moveTo(ctx, &db, learnv1alpha1.PhasePending, "accepted; provisioning starts next")
	case learnv1alpha1.PhasePending:
		return r.moveTo(ctx, &db, learnv1alpha1.PhaseProvisioning, "provisioning in the external system")
	case learnv1alpha1.PhaseProvisioning:
		if err := r.call(ctx, r.System.HealthCheck); err != nil {
			return r.fail(ctx, &db, err)
		}
		var endpoint string
		if err := r.call(ctx, func(ctx context.Context) (err error) {
			endpoint, err = r.System.Provision(ctx, external.Key(db.Namespace, db.Name), db.Spec.DatabaseName)
			return err
		}); err != nil {
			return r.fail(ctx, &db, err)
		}
		db.Status.Endpoint = endpoint
		return r.moveTo(ctx, &db, learnv1alpha1.PhaseConfiguring, "creating the credentials Secret")
	case learnv1alpha1.PhaseConfiguring:
		if err := r.ensureSecret(ctx, &db); err != nil {
			return ctrl.Result{}, err
		}
		return r.moveTo(ctx, &db, learnv1alpha1.PhaseDeploying, "deploying the StatefulSet")
	case learnv1alpha1.PhaseDeploying:
		if err := r.ensureWorkload(ctx, &db); err != nil {
			return ctrl.Result{}, err
		}
		return r.moveTo(ctx, &db, learnv1alpha1.PhaseVerifying, "verifying the database")
	case learnv1alpha1.PhaseVerifying:
		if err := r.call(ctx, func(ctx context.Context) error { return r.System.Ping(ctx, db.Status.Endpoint) }); err != nil {
			return r.fail(ctx, &db, err)
		}
		return r.moveTo(ctx, &db, learnv1alpha1.PhaseReady, "database verified")
	case learnv1alpha1.PhaseReady:
		if db.Generation != db.Status.ObservedGeneration {
			return r.moveTo(ctx, &db, learnv1alpha1.PhaseUpdating, "applying the changed spec")
		}
		// Re-assert what we own: writes nothing when nothing drifted.
		if err := r.ensureSecret(ctx, &db); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.ensureWorkload(ctx, &db)
	case learnv1alpha1.PhaseUpdating:
		if err := r.ensureSecret(ctx, &db); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.ensureWorkload(ctx, &db); err != nil {
			return ctrl.Result{}, err
		}
		return r.moveTo(ctx, &db, learnv1alpha1.PhaseVerifying, "verifying the changed database")
	case learnv1alpha1.PhaseFailed:
		// Woken early (entering Failed is a status write, so a watch event):
		// wait out the persisted backoff instead of restarting it.
		if next := db.Status.NextRetryTime; next != nil {
			if wait := next.Sub(r.now()); wait > 0 {
				return ctrl.Result{RequeueAfter: wait}, nil
			}
		}
		if err := r.call(ctx, r.System.HealthCheck); err != nil {
			return r.fail(ctx, &db, err)
		}
		return r.moveTo(ctx, &db, learnv1alpha1.PhaseProvisioning, "retrying provisioning")
	default:
		return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("unknown phase %q in status", db.Status.Phase))
	}
}

// call makes one external call through the breaker: refused without
// calling while it is open (breaker.ErrOpen), the outcome told otherwise.
func (r *Reconciler) call(ctx context.Context, do func(context.Context) error) error {
	done, err := r.Breaker.Allow()
	if err != nil {
		return err
	}
	err = do(ctx)
	done(err == nil)
	return err
}

// fail records a failed (or refused) external call as the reference
// operator does: phase Failed, ExternalSystemAvailable=False with reason
// Unavailable (CircuitOpen when the breaker refused), one more
// status.retries, status.nextRetryTime = now + Backoff.Delay(retries-1),
// and that delay as RequeueAfter — with a nil error, or the controller
// would ignore the RequeueAfter and back off on its own.
func (r *Reconciler) fail(ctx context.Context, db *learnv1alpha1.Database, cause error) (ctrl.Result, error) {
	reason := learnv1alpha1.ReasonUnavailable
	if errors.Is(cause, breaker.ErrOpen) {
		reason = learnv1alpha1.ReasonCircuitOpen
	}
	now := r.now()
	st := &db.Status
	st.Phase, st.Ready = learnv1alpha1.PhaseFailed, false
	st.Retries++
	delay := r.Backoff.Delay(int(st.Retries) - 1)
	st.LastFailureTime = ptr(metav1.NewMicroTime(now))
	st.NextRetryTime = ptr(metav1.NewMicroTime(now.Add(delay)))
	setCondition(db, learnv1alpha1.ConditionExternalSystemAvailable, metav1.ConditionFalse, reason, cause.Error())
	setCondition(db, learnv1alpha1.ConditionReady, metav1.ConditionFalse, reason, "the external system is not available")
	setCondition(db, learnv1alpha1.ConditionFailed, metav1.ConditionTrue, reason, cause.Error())
	if err := r.Client.Status().Update(ctx, db); err != nil {
		return ctrl.Result{}, fmt.Errorf("persist phase Failed: %w", err)
	}
	return ctrl.Result{RequeueAfter: delay}, nil
}

// moveTo persists one transition of the state machine (refusing any that
// learnv1alpha1.CanTransition does not allow) with the conditions that
// describe the new phase.
func (r *Reconciler) moveTo(ctx context.Context, db *learnv1alpha1.Database, to learnv1alpha1.Phase, message string) (ctrl.Result, error) {
	from := db.Status.Phase
	if !learnv1alpha1.CanTransition(from, to) {
		return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("phase %q → %q is not in the state machine", from, to))
	}
	switch from {
	case learnv1alpha1.PhaseProvisioning, learnv1alpha1.PhaseVerifying, learnv1alpha1.PhaseFailed:
		setCondition(db, learnv1alpha1.ConditionExternalSystemAvailable, metav1.ConditionTrue, learnv1alpha1.ReasonAvailable, "external system answered")
	}
	if from == learnv1alpha1.PhaseFailed {
		setCondition(db, learnv1alpha1.ConditionFailed, metav1.ConditionFalse, learnv1alpha1.ReasonRecovered, "retrying")
		db.Status.NextRetryTime = nil
	}
	db.Status.Phase = to
	if to == learnv1alpha1.PhaseReady {
		db.Status.Ready, db.Status.ObservedGeneration, db.Status.Retries = true, db.Generation, 0
		setCondition(db, learnv1alpha1.ConditionReady, metav1.ConditionTrue, learnv1alpha1.ReasonReconciled, message)
	} else {
		db.Status.Ready = false
		setCondition(db, learnv1alpha1.ConditionReady, metav1.ConditionFalse, learnv1alpha1.ReasonInProgress, message)
	}
	if err := r.Client.Status().Update(ctx, db); err != nil {
		return ctrl.Result{}, fmt.Errorf("persist phase %s: %w", to, err)
	}
	return ctrl.Result{}, nil
}

// ensureSecret is exercise 3's EnsureSecret, recorded in status.secretName.
func (r *Reconciler) ensureSecret(ctx context.Context, db *learnv1alpha1.Database) error {
	if err := idempotency.EnsureSecret(ctx, r.Client, db); err != nil {
		return err
	}
	db.Status.SecretName = idempotency.SecretName(db.Name)
	return nil
}

// ensureWorkload creates or updates the Database's StatefulSet (named as
// the Database), owned by it. Immutable fields are set only on creation.
func (r *Reconciler) ensureWorkload(ctx context.Context, db *learnv1alpha1.Database) error {
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: db.Name, Namespace: db.Namespace}}
	labels := map[string]string{"app.kubernetes.io/name": "database", "app.kubernetes.io/instance": db.Name}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, sts, func() error {
		if sts.CreationTimestamp.IsZero() {
			sts.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
			sts.Spec.ServiceName = db.Name
		}
		replicas := db.Spec.Replicas
		sts.Spec.Replicas = &replicas
		sts.Spec.Template.Labels = labels
		if len(sts.Spec.Template.Spec.Containers) == 0 {
			sts.Spec.Template.Spec.Containers = []corev1.Container{{Name: "database"}}
		}
		sts.Spec.Template.Spec.Containers[0].Image = db.Spec.Image
		return controllerutil.SetControllerReference(db, sts, r.Client.Scheme())
	})
	if err != nil {
		return fmt.Errorf("ensure StatefulSet %s: %w", sts.Name, err)
	}
	return nil
}

func setCondition(db *learnv1alpha1.Database, typ string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&db.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: db.Generation,
	})
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func ptr[T any](v T) *T { return &v }
