package database

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator/api/v1alpha1"
	"github.com/operator-lab/lab/operator/breaker"
	"github.com/operator-lab/lab/operator/internal/status"
	"github.com/operator-lab/lab/operator/switches"
)

// ControllerName is the name the Database controller runs and emits under.
const ControllerName = "database"

// Client-side limits on external calls, before timescale.
const (
	// ExternalCallsPerSecond and ExternalBurst configure the rate limiter.
	ExternalCallsPerSecond = 2
	ExternalBurst          = 3
	// BreakerThreshold consecutive failures open the breaker for BreakerOpenTimeout.
	BreakerThreshold   = 5
	BreakerOpenTimeout = time.Minute
)

// External is the external system a Database lives in (see operator/world
// for the simulated one).
type External interface {
	HealthCheck(ctx context.Context) error
	// Provision creates the database if needed and returns its endpoint; it
	// must be idempotent.
	Provision(ctx context.Context, key, databaseName string) (string, error)
	Ping(ctx context.Context, endpoint string) error
	// Deprovision drops the database provisioned for key; dropping one that
	// is not there is not an error, so a retry after a lost reply is safe.
	Deprovision(ctx context.Context, key string) error
}

// Options configure a Reconciler.
type Options struct {
	// Client should read from the manager's cache (mgr.GetClient(), wrapped by
	// observe.Client to report every call).
	Client   client.Client
	Scheme   *runtime.Scheme
	Switches *switches.Switches
	External External
	// Emitter receives phase, condition, breaker, backoff and ratelimit events (nil: none).
	Emitter observe.Emitter
	// Now is the clock for retry bookkeeping and the breaker (default time.Now).
	Now func() time.Time
}

// Reconciler reconciles Database objects. It is safe for concurrent
// reconciles: its shared state (the rate limiter and the breaker) is
// synchronised, and everything per object lives in the object's status.
type Reconciler struct {
	client   client.Client
	scheme   *runtime.Scheme
	switches *switches.Switches
	external External
	em       observe.Emitter
	now      func() time.Time

	limiterMu sync.Mutex // guards limitAt; the limiter itself is concurrency-safe
	limiter   *rate.Limiter
	limitAt   float64
	breaker   *breaker.Breaker
}

// New returns a Database reconciler.
func New(opts Options) *Reconciler {
	r := &Reconciler{
		client:   opts.Client,
		scheme:   opts.Scheme,
		switches: opts.Switches,
		external: opts.External,
		em:       opts.Emitter,
		now:      opts.Now,
		limiter:  rate.NewLimiter(ExternalCallsPerSecond, ExternalBurst),
		limitAt:  1,
	}
	if r.em == nil {
		r.em = observe.Discard
	}
	if r.now == nil {
		r.now = time.Now
	}
	r.breaker = breaker.New(breaker.Options{
		Threshold:   BreakerThreshold,
		OpenTimeout: func() time.Duration { return r.switches.Scale(BreakerOpenTimeout) },
		Now:         r.now,
		IsFailure: func(err error) bool {
			// A reconcile cancelled on shutdown says nothing about the
			// system, nor does a call the rate limiter deferred.
			return err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, errDeferred)
		},
		OnTransition: func(ctx context.Context, t breaker.Transition) {
			observe.Emit(ctx, r.em, observe.BreakerOpenedEvent(string(t.From), string(t.To), t.Failures, t.Cooldown))
		},
		OnFailureCount: func(ctx context.Context, st breaker.State, failures int) {
			observe.Emit(ctx, r.em, observe.BreakerCountEvent(string(st), failures))
		},
		OnRefuse: func(ctx context.Context, x breaker.Refusal) {
			observe.Emit(ctx, r.em, observe.BreakerRefusedEvent(string(x.State), x.Failures, x.ProbeIn))
		},
	})
	return r
}

// Breaker exposes the circuit breaker, for display and tests.
func (r *Reconciler) Breaker() *breaker.Breaker { return r.breaker }

// +kubebuilder:rbac:groups=lab.operator-lab.dev,resources=databases,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=lab.operator-lab.dev,resources=databases/finalizers,verbs=update
// +kubebuilder:rbac:groups=lab.operator-lab.dev,resources=databases/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;update;patch

// Reconcile performs one step of the Database state machine.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	db := &v1alpha1.Database{}
	if err := r.client.Get(ctx, req.NamespacedName, db); err != nil {
		// Gone since it was queued: our finalizer was removed, so the
		// external database was deprovisioned; owned objects go with it
		// through their owner references (garbage collection).
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !db.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, db)
	}
	if !controllerutil.ContainsFinalizer(db, v1alpha1.DatabaseFinalizer) {
		// Before anything exists outside the cluster, so that no crash can
		// leave an external database that nothing will drop. Update sends
		// the resourceVersion: from a stale copy it fails with a Conflict
		// (and the retry reads afresh) where a merge patch of the list would
		// drop a finalizer another controller added meanwhile.
		controllerutil.AddFinalizer(db, v1alpha1.DatabaseFinalizer)
		if err := r.client.Update(ctx, db); err != nil {
			return reconcile.Result{}, fmt.Errorf("add finalizer to Database %s: %w", req.NamespacedName, err)
		}
	}
	s := &step{
		r:      r,
		db:     db,
		before: db.Status.DeepCopy(),
		sw:     r.switches.Get(),
		now:    r.now(),
	}
	return s.run(ctx)
}

// finalize deprovisions a deleted Database's external database, then
// removes the finalizer, which lets the API server delete the object. While
// the deprovision fails, the finalizer stays and so does the object: the
// error sends the key back to the queue, which retries with backoff.
func (r *Reconciler) finalize(ctx context.Context, db *v1alpha1.Database) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(db, v1alpha1.DatabaseFinalizer) {
		// Ours is done; another controller's finalizer still holds it.
		return reconcile.Result{}, nil
	}
	key := externalKey(db)
	deprovision := func(ctx context.Context) error { return r.external.Deprovision(ctx, key) }
	var err error
	if r.switches.Get().Breaker {
		err = r.breaker.Call(ctx, deprovision)
	} else {
		err = deprovision(ctx)
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("deprovision Database %s: %w", key, err)
	}
	controllerutil.RemoveFinalizer(db, v1alpha1.DatabaseFinalizer)
	if err := r.client.Update(ctx, db); err != nil {
		// NotFound: already gone. Any other error retries, and the retry's
		// Deprovision finds nothing to drop.
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	return reconcile.Result{}, nil
}

// externalKey is the key a Database's external database is provisioned under.
func externalKey(db *v1alpha1.Database) string { return db.Namespace + "/" + db.Name }

// step is one reconcile of one Database: the object, the status it was read
// with, and the switches as they were when the reconcile started.
type step struct {
	r      *Reconciler
	db     *v1alpha1.Database
	before *v1alpha1.DatabaseStatus
	sw     switches.Values
	now    time.Time
	conds  status.Conditions
	// after holds events that describe the new status (backoff); they are
	// emitted only once that status is persisted.
	after []observe.Event
}

// outcome is what a phase handler decided: the phase to move to ("" to
// stay) and what Reconcile returns.
type outcome struct {
	next   v1alpha1.Phase
	result reconcile.Result
	err    error
}

func stay() outcome                   { return outcome{} }
func moveTo(p v1alpha1.Phase) outcome { return outcome{next: p} }

// fail is the outcome of an error, but for one: AlreadyExists from
// creating an owned object means the cache has not yet seen the object an
// earlier reconcile created. That object's watch event queues the
// Database again, so this reconcile ends without an error (a retry now
// would read the same cache).
func fail(err error) outcome {
	if apierrors.IsAlreadyExists(err) {
		return stay()
	}
	return outcome{err: err}
}

func (s *step) run(ctx context.Context) (reconcile.Result, error) {
	var o outcome
	storage, specErr := resource.ParseQuantity(s.db.Spec.Storage)
	switch {
	case specErr != nil:
		o = s.invalidSpec(fmt.Errorf("spec.storage %q is not a quantity like 1Gi: %w", s.db.Spec.Storage, specErr))
	default:
		o = s.handle(ctx, storage)
	}
	if o.next != "" && o.next != s.db.Status.Phase {
		if !v1alpha1.CanTransition(s.db.Status.Phase, o.next) {
			// A bug in this controller, not in the object: refuse to persist it.
			return reconcile.Result{}, reconcile.TerminalError(fmt.Errorf("phase %q → %q is not in the state machine", s.db.Status.Phase, o.next))
		}
		s.db.Status.Phase = o.next
	}
	if err := s.persist(ctx); err != nil {
		return reconcile.Result{}, err
	}
	return o.result, o.err
}

// handle dispatches on the current phase.
func (s *step) handle(ctx context.Context, storage resource.Quantity) outcome {
	switch s.db.Status.Phase {
	case "":
		s.inProgress("accepted; provisioning starts next")
		return moveTo(v1alpha1.PhasePending)
	case v1alpha1.PhasePending:
		s.inProgress("provisioning in the external system")
		return moveTo(v1alpha1.PhaseProvisioning)
	case v1alpha1.PhaseProvisioning:
		return s.provision(ctx)
	case v1alpha1.PhaseConfiguring:
		if err := s.ensureSecret(ctx); err != nil {
			return fail(err)
		}
		return moveTo(v1alpha1.PhaseDeploying)
	case v1alpha1.PhaseDeploying:
		if _, err := s.ensureWorkload(ctx, storage); err != nil {
			return fail(err)
		}
		return moveTo(v1alpha1.PhaseVerifying)
	case v1alpha1.PhaseVerifying:
		return s.verify(ctx, storage)
	case v1alpha1.PhaseReady:
		return s.ready(ctx, storage)
	case v1alpha1.PhaseUpdating:
		if err := s.ensureSecret(ctx); err != nil {
			return fail(err)
		}
		if _, err := s.ensureWorkload(ctx, storage); err != nil {
			return fail(err)
		}
		return moveTo(v1alpha1.PhaseVerifying)
	case v1alpha1.PhaseFailed:
		return s.retry(ctx)
	default:
		return s.invalidSpec(fmt.Errorf("unknown phase %q in status", s.db.Status.Phase))
	}
}

func (s *step) setCondition(typ string, st metav1.ConditionStatus, reason, message string) {
	s.conds.Set(&s.db.Status.Conditions, s.db.Generation, typ, st, reason, message)
}

func (s *step) inProgress(message string) {
	s.db.Status.Ready = false
	s.setCondition(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonInProgress, message)
}

// provision health-checks the external system, then provisions the database in it.
func (s *step) provision(ctx context.Context) outcome {
	// Both calls' rate-limiter tokens are taken with the first.
	if o, ok := s.external(ctx, 2, func(ctx context.Context) error { return s.r.external.HealthCheck(ctx) }); !ok {
		return o
	}
	var endpoint string
	key := externalKey(s.db)
	if o, ok := s.external(ctx, 0, func(ctx context.Context) (err error) {
		endpoint, err = s.r.external.Provision(ctx, key, s.db.Spec.DatabaseName)
		return err
	}); !ok {
		return o
	}
	s.db.Status.Endpoint = endpoint
	s.inProgress("creating the credentials Secret")
	return moveTo(v1alpha1.PhaseConfiguring)
}

// verify waits for the workload to roll out, then pings the database.
func (s *step) verify(ctx context.Context, storage resource.Quantity) outcome {
	if err := s.ensureSecret(ctx); err != nil {
		return fail(err)
	}
	sts, err := s.ensureWorkload(ctx, storage)
	if err != nil {
		return fail(err)
	}
	if !workloadReady(sts) {
		// Not a failure: the StatefulSet's status change (a watch on what we
		// own) wakes this controller when the rollout is done.
		s.db.Status.Ready = false
		s.setCondition(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonWaitingForWorkload, "waiting for the StatefulSet to roll out")
		return stay()
	}
	if o, ok := s.external(ctx, 1, func(ctx context.Context) error { return s.r.external.Ping(ctx, s.db.Status.Endpoint) }); !ok {
		return o
	}
	s.db.Status.Ready = true
	s.db.Status.ObservedGeneration = s.db.Generation
	s.db.Status.Retries = 0
	s.db.Status.NextRetryTime = nil
	s.setCondition(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonReconciled, "database verified")
	return moveTo(v1alpha1.PhaseReady)
}

// ready notices spec changes and otherwise re-asserts the owned objects,
// which writes nothing when they are as they should be.
func (s *step) ready(ctx context.Context, storage resource.Quantity) outcome {
	if s.db.Generation != s.db.Status.ObservedGeneration {
		s.inProgress("applying the changed spec")
		return moveTo(v1alpha1.PhaseUpdating)
	}
	if err := s.ensureSecret(ctx); err != nil {
		return fail(err)
	}
	if _, err := s.ensureWorkload(ctx, storage); err != nil {
		return fail(err)
	}
	return stay()
}

// retry leaves Failed once the retry time has come and the external system
// passes a health check.
func (s *step) retry(ctx context.Context) outcome {
	if next := s.db.Status.NextRetryTime; next != nil {
		if wait := next.Sub(s.now); wait > 0 {
			// Woken early (by a watch event, say): wait out the persisted
			// backoff instead of restarting it.
			return outcome{result: reconcile.Result{RequeueAfter: readable(wait)}}
		}
	}
	if o, ok := s.external(ctx, 1, func(ctx context.Context) error { return s.r.external.HealthCheck(ctx) }); !ok {
		return o
	}
	s.db.Status.NextRetryTime = nil
	s.conds.Clear(&s.db.Status.Conditions, s.db.Generation, v1alpha1.ConditionFailed, v1alpha1.ReasonRecovered, "retrying")
	s.inProgress("retrying provisioning")
	return moveTo(v1alpha1.PhaseProvisioning)
}

// errDeferred is what an external call returns, without being made, when
// the rate limiter has no tokens for it yet: not a failure of the system.
var errDeferred = errors.New("deferred by the rate limiter")

// external makes one call to the external system: through the breaker (if
// switched on), then past the rate limiter (if switched on), which gives
// it tokens for this and the step's next tokens-1 calls. ok is false when
// the call did not succeed; o then says what the reconcile does.
//
// The breaker comes first: a call it refuses costs the external system
// nothing, and no rate-limiter token either. Were the limiter asked
// first, its RequeueAfter (which makes the queue Forget the key's
// failures) would alternate with the refusals' retries and reset their
// backoff for as long as the breaker stays open: a hot loop.
func (s *step) external(ctx context.Context, tokens int, call func(context.Context) error) (o outcome, ok bool) {
	var deferred *outcome
	limited := func(ctx context.Context) error {
		if d, ok := s.rateLimit(ctx, tokens); !ok {
			deferred = &d
			return errDeferred
		}
		return call(ctx)
	}
	var err error
	if s.sw.Breaker {
		err = s.r.breaker.Call(ctx, limited)
	} else {
		err = limited(ctx)
	}
	switch {
	case deferred != nil:
		return *deferred, false
	case err != nil:
		return s.externalFailed(ctx, err), false
	}
	s.setCondition(v1alpha1.ConditionExternalSystemAvailable, metav1.ConditionTrue, v1alpha1.ReasonAvailable, "external system answered")
	return outcome{}, true
}

// rateLimit takes, all at once, the rate-limiter tokens for the external
// calls this step is about to make (if the limiter is switched on; none
// for calls whose tokens an earlier call took). Taking them one call at a
// time would let concurrent steps each spend a token on their first call
// and then all wait for the second, for ever. Every check is reported,
// allowed or not, so a view can count waits against all calls. ok is false
// when the tokens are not there yet: o then returns RequeueAfter the wait —
// the worker is free meanwhile.
func (s *step) rateLimit(ctx context.Context, calls int) (o outcome, ok bool) {
	if !s.sw.RateLimit || calls == 0 {
		return outcome{}, true
	}
	wait := s.r.reserve(s.sw, calls)
	if wait <= 0 {
		observe.Emit(ctx, s.r.em, observe.RateLimitEvent(calls, 0))
		return outcome{}, true
	}
	wait = readable(wait)
	observe.Emit(ctx, s.r.em, observe.RateLimitEvent(calls, wait))
	return outcome{result: reconcile.Result{RequeueAfter: wait}}, false
}

// reserve takes n rate-limiter tokens now, or returns how long until they
// are free (having given the reservation back).
func (r *Reconciler) reserve(sw switches.Values, n int) time.Duration {
	r.limiterMu.Lock()
	if r.limitAt != sw.Timescale {
		r.limitAt = sw.Timescale
		r.limiter.SetLimit(rate.Limit(ExternalCallsPerSecond * sw.Timescale))
	}
	r.limiterMu.Unlock()
	res := r.limiter.ReserveN(time.Now(), n)
	wait := res.Delay()
	if wait > 0 {
		res.Cancel()
	}
	return wait
}

// externalFailed records a failed external call: Failed phase, conditions,
// retry bookkeeping, and the return the requeue switch asks for.
func (s *step) externalFailed(ctx context.Context, err error) outcome {
	reason := v1alpha1.ReasonUnavailable
	if errors.Is(err, breaker.ErrOpen) {
		reason = v1alpha1.ReasonCircuitOpen
	}
	st := &s.db.Status
	st.Ready = false
	s.setCondition(v1alpha1.ConditionExternalSystemAvailable, metav1.ConditionFalse, reason, err.Error())
	s.setCondition(v1alpha1.ConditionReady, metav1.ConditionFalse, reason, "the external system is not available")
	failedReason := reason
	if s.sw.Requeue == switches.RequeueTerminal {
		failedReason = v1alpha1.ReasonGaveUp
	}
	s.setCondition(v1alpha1.ConditionFailed, metav1.ConditionTrue, failedReason, err.Error())
	if st.Phase != v1alpha1.PhaseFailed {
		st.LastFailureTime = ptrTime(s.now)
	}

	var delay time.Duration
	if s.sw.Requeue == switches.RequeueAfter {
		// The controller schedules the retry itself, so it keeps the count
		// and the time in status where no watch event can reset them.
		st.Retries++
		st.LastFailureTime = ptrTime(s.now)
		delay = RetryDelay(s.sw, st.Retries)
		st.NextRetryTime = ptrTime(s.now.Add(delay))
		s.after = append(s.after, observe.BackoffEvent(int(st.Retries), delay))
	} else {
		// The queue (error, requeue) or nobody (terminal) schedules the
		// retry: status changes only on entering Failed, since each status
		// write is a watch event that would retry at once, bypassing the
		// queue's backoff.
		st.NextRetryTime = nil
	}
	result, rerr := s.sw.NotDone(err, delay)
	return outcome{next: v1alpha1.PhaseFailed, result: result, err: rerr}
}

// invalidSpec is a permanent error: Failed, and a TerminalError whatever the
// requeue switch says, since retrying cannot fix the spec (a spec change will
// trigger a new reconcile).
func (s *step) invalidSpec(err error) outcome {
	s.db.Status.Ready = false
	s.setCondition(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonInvalidSpec, err.Error())
	s.setCondition(v1alpha1.ConditionFailed, metav1.ConditionTrue, v1alpha1.ReasonInvalidSpec, err.Error())
	return outcome{next: v1alpha1.PhaseFailed, err: reconcile.TerminalError(err)}
}

// ensureSecret creates or updates the credentials Secret, owned by the Database.
func (s *step) ensureSecret(ctx context.Context) error {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: SecretName(s.db.Name), Namespace: s.db.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, s.r.client, secret, func() error {
		if err := mutateSecret(secret, s.db); err != nil {
			return err
		}
		return controllerutil.SetControllerReference(s.db, secret, s.r.scheme)
	}); err != nil {
		return fmt.Errorf("ensure Secret %s: %w", secret.Name, err)
	}
	s.db.Status.SecretName = secret.Name
	return nil
}

// ensureWorkload creates or updates the StatefulSet, owned by the Database.
func (s *step) ensureWorkload(ctx context.Context, storage resource.Quantity) (*appsv1.StatefulSet, error) {
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: WorkloadName(s.db.Name), Namespace: s.db.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, s.r.client, sts, func() error {
		mutateWorkload(sts, s.db, storage)
		return controllerutil.SetControllerReference(s.db, sts, s.r.scheme)
	}); err != nil {
		return nil, fmt.Errorf("ensure StatefulSet %s: %w", sts.Name, err)
	}
	return sts, nil
}

// persist writes the status if it changed, then reports the phase change,
// the changed conditions and the other events that describe the new status.
// A steady state writes nothing.
//
// A conflict means this reconcile worked from an outdated copy (typically the
// cache had not caught up with our own previous write); NotFound means the
// object is gone. Either way the newer state's watch event queues another
// reconcile, so the write is dropped silently — and so are the events, since
// nothing they describe was persisted. The reconcile still returns what it
// decided, which keeps the queue's per-item backoff consistent (returning
// success here would Forget the item's failures).
func (s *step) persist(ctx context.Context) error {
	if equality.Semantic.DeepEqual(s.before, &s.db.Status) {
		return nil
	}
	if err := s.r.client.Status().Update(ctx, s.db); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("update status of Database %s/%s: %w", s.db.Namespace, s.db.Name, err)
	}
	if from, to := s.before.Phase, s.db.Status.Phase; from != to {
		observe.Emit(ctx, s.r.em, observe.PhaseEvent(string(from), string(to)))
	}
	s.conds.Emit(ctx, s.r.em)
	for _, e := range s.after {
		observe.Emit(ctx, s.r.em, e)
	}
	return nil
}

// readable rounds a computed wait up to a unit people read at a glance
// (milliseconds, or microseconds under 10ms), never down, so the retry is
// never early and a tiny wait never becomes zero (which would mean "no requeue").
func readable(d time.Duration) time.Duration {
	unit := time.Millisecond
	if d < 10*time.Millisecond {
		unit = time.Microsecond
	}
	return (d + unit - 1).Truncate(unit)
}

func ptrTime(t time.Time) *metav1.MicroTime {
	mt := metav1.NewMicroTime(t)
	return &mt
}
