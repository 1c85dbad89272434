package together_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator-lab/lab/labs/checkkit"
	"github.com/operator-lab/lab/labs/checkkit/cluster"
	"github.com/operator-lab/lab/observe"

	learnv1alpha1 "example.com/lab44/api/v1alpha1"
	"example.com/lab44/backoff"
	"example.com/lab44/breaker"
	"example.com/lab44/external"
	"example.com/lab44/idempotency"
	"example.com/lab44/together"
)

// written is one persisted status.
type written struct {
	at                   time.Time
	phase                learnv1alpha1.Phase
	retries              int32
	lastFailure, nextTry *metav1.MicroTime
	ext                  *metav1.Condition
	down                 bool // the system was down when it was written
}

// TestOutage: the external system is down when the Database is created and
// comes back once the breaker has opened; the Database must reach Ready,
// through the operator's state machine, with the backoff in status and the
// breaker keeping the calls in check. The status write that first records
// Failed fails once, as a conflict would.
func TestOutage(t *testing.T) {
	ctx := context.Background()
	obs := cluster.Observe(t)
	cfg := cluster.Config(t)
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = learnv1alpha1.AddToScheme(scheme)
	c := cluster.Client(t, cfg, scheme)
	ns := cluster.Namespace(t, c)
	db := &learnv1alpha1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: checkkit.Name(checkkit.Pick("shop", "crm", "wiki")), Namespace: ns},
		Spec: learnv1alpha1.DatabaseSpec{Image: "postgres:17", Replicas: 1, DatabaseName: checkkit.Pick("shop", "app"),
			Username: "app", Storage: "1Gi"},
	}
	system := cluster.NewFakeSystem(external.ErrUnavailable)
	system.SetDown(true)
	var down atomic.Bool
	down.Store(true)
	threshold := checkkit.Between(2, 3)
	policy := backoff.Policy{Base: time.Duration(checkkit.Between(20, 50)) * time.Millisecond, Max: 2 * time.Second}
	// The retry after the failure that opens the breaker comes
	// Delay(threshold-1) later: well inside the cooldown, so the breaker
	// refuses it — even a backoff one step ahead, Delay(threshold), does,
	// and is then reported as the backoff it is. A cooldown any closer to
	// the retry would make the refusal a matter of the machine's load.
	cooldown := policy.Base<<threshold + time.Duration(checkkit.Between(250, 400))*time.Millisecond

	var mu sync.Mutex
	var log []written
	// The first write of phase Failed fails: fail must return its error.
	failing, writeFailed := cluster.FailStatusWriteWhen(c, func(obj client.Object) bool {
		d, ok := obj.(*learnv1alpha1.Database)
		return ok && d.Name == db.Name && d.Status.Phase == learnv1alpha1.PhaseFailed
	}, apierrors.NewConflict(learnv1alpha1.GroupVersion.WithResource("databases").GroupResource(), db.Name, errors.New(conflictText)))
	cluster.StartManager(t, cfg, scheme, ns, func(mgr ctrl.Manager) error {
		record := func(obj client.Object) {
			if d, ok := obj.(*learnv1alpha1.Database); ok && d.Name == db.Name {
				mu.Lock()
				defer mu.Unlock()
				log = append(log, written{at: time.Now(), phase: d.Status.Phase, retries: d.Status.Retries,
					lastFailure: d.Status.LastFailureTime.DeepCopy(), nextTry: d.Status.NextRetryTime.DeepCopy(),
					ext:  meta.FindStatusCondition(d.Status.Conditions, learnv1alpha1.ConditionExternalSystemAvailable),
					down: down.Load()})
			}
		}
		r := &together.Reconciler{
			// An uncached client: what the reconciler reads is what it last
			// wrote, so the grading does not depend on how fast the cache is.
			Client:  cluster.StatusWrites(observe.Client(obs.Bus, failing), record),
			System:  system,
			Breaker: breaker.New(threshold, cooldown, breaker.RealClock{}),
			Backoff: policy,
		}
		return ctrl.NewControllerManagedBy(mgr).Named("database").
			For(&learnv1alpha1.Database{}).Owns(&corev1.Secret{}).Owns(&appsv1.StatefulSet{}).
			WithOptions(obs.QueueOptions()).Complete(observe.Reconciler(obs.Bus, "database", nil, system.Attribute(r)))
	})
	if err := c.Create(ctx, db); err != nil {
		t.Fatal(err)
	}
	key := ns + "/" + db.Name
	writes := func() []written {
		mu.Lock()
		defer mu.Unlock()
		return append([]written(nil), log...)
	}
	moves := func() []learnv1alpha1.Phase {
		var out []learnv1alpha1.Phase
		for _, w := range writes() {
			if len(out) == 0 || out[len(out)-1] != w.phase {
				out = append(out, w.phase)
			}
		}
		return out
	}
	show := func(ps []learnv1alpha1.Phase) string {
		parts := make([]string, len(ps))
		for i, p := range ps {
			parts[i] = string(p)
		}
		return strings.Join(parts, " → ")
	}
	circuitOpen := func() bool {
		for _, w := range writes() {
			if w.ext != nil && w.ext.Reason == learnv1alpha1.ReasonCircuitOpen {
				return true
			}
		}
		return false
	}

	// callThroughOpen is the first call made after threshold failed calls
	// in a row sooner than the cooldown: one an open breaker refuses.
	callThroughOpen := func() (cluster.Call, time.Duration, bool) {
		failed := 0
		calls := system.Calls()
		for i, call := range calls {
			if failed >= threshold && i > 0 {
				if gap := call.At.Sub(calls[i-1].At); gap < cooldown-10*time.Millisecond {
					return call, gap, true
				}
			}
			if call.Err != nil {
				failed++
			} else {
				failed = 0
			}
		}
		return cluster.Call{}, 0, false
	}
	// The outage lasts until the breaker has refused a call, or until it
	// is plain it will not (it let a call through when it should not), or
	// 10s.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, _, through := callThroughOpen(); circuitOpen() || through {
			break
		}
	}
	down.Store(false)
	system.SetDown(false)

	// failedWrite is the reconcile whose status write of Failed failed.
	failedWrite := func() (write, end observe.Event, ok bool) {
		if !writeFailed() {
			return write, end, false
		}
		events := cluster.ForKey(obs.Events(), key)
		for _, e := range cluster.OfKind(events, observe.KindClient) {
			if strings.HasPrefix(e.Verb, "status.") && e.Outcome != observe.OutcomeOK && strings.Contains(e.Error, conflictText) {
				write = e
				break
			}
		}
		for _, e := range cluster.OfKind(events, observe.KindReconcileEnd) {
			if write.ReconcileID != "" && e.ReconcileID == write.ReconcileID {
				return write, e, true
			}
		}
		return write, end, false
	}

	t.Run("never returns an error (with or without RequeueAfter)", func(t *testing.T) {
		_, lost, _ := failedWrite()
		for _, e := range cluster.OfKind(cluster.ForKey(obs.Events(), key), observe.KindReconcileEnd) {
			if e.Result == observe.ResultError && e.ReconcileID != lost.ReconcileID {
				what := "an error"
				if e.RequeueAfter > 0 {
					what = fmt.Sprintf("an error together with RequeueAfter %s (the controller ignores RequeueAfter then)", e.RequeueAfter)
				}
				checkkit.Expect(t, "RequeueAfter with no error while the system fails", what+": "+e.Error)
			}
		}
	})

	t.Run("reaches Ready once the system is back", func(t *testing.T) {
		checkkit.Eventually(t, "the Database to reach Ready", func() error {
			var latest learnv1alpha1.Database
			if err := c.Get(ctx, client.ObjectKeyFromObject(db), &latest); err != nil {
				return err
			}
			if latest.Status.Phase != learnv1alpha1.PhaseReady {
				return fmt.Errorf("phase %q after %s (reconciles: %s)", latest.Status.Phase, show(moves()),
					cluster.Describe(cluster.OfKind(cluster.ForKey(obs.Events(), key), observe.KindReconcileEnd)))
			}
			if latest.Status.Retries != 0 {
				return fmt.Errorf("Ready with status.retries %d (a success resets it)", latest.Status.Retries)
			}
			return nil
		})
	})

	t.Run("persists moves learnv1alpha1.CanTransition allows only", func(t *testing.T) {
		prev := learnv1alpha1.Phase("")
		for _, p := range moves() {
			if !learnv1alpha1.CanTransition(prev, p) {
				checkkit.Expect(t, "valid transitions", fmt.Sprintf("%s → %s in %s", prev, p, show(moves())))
			}
			prev = p
		}
	})

	t.Run("returns the error of a status write that failed in fail", func(t *testing.T) {
		var write, end observe.Event
		checkkit.Eventually(t, "the failed status write of phase Failed, and the end of its reconcile", func() error {
			var ok bool
			if write, end, ok = failedWrite(); !ok {
				return fmt.Errorf("phases %s", show(moves()))
			}
			return nil
		})
		// RequeueAfter brings a retry, but the failure it was to record —
		// status.retries, lastFailureTime, nextRetryTime — is lost.
		if end.Result != observe.ResultError {
			checkkit.Expect(t, "the reconcile whose %s of phase Failed failed (Conflict) to return that error", fmt.Sprintf("%s: the failure was never recorded", end.Brief()), write.Verb)
		}
	})

	t.Run("in Provisioning, health-checks right before Provision", func(t *testing.T) {
		for _, calls := range byReconcile(system.Calls()) {
			for i, call := range calls {
				if call.Step == cluster.StepProvision && (i == 0 || calls[i-1].Step != cluster.StepHealthCheck || calls[i-1].Err != nil) {
					before := "no external call before it"
					if i > 0 {
						before = "a " + calls[i-1].Step + " call before it"
					}
					checkkit.Expect(t, "a HealthCheck that passes right before Provision, in the same reconcile", "Provision with "+before)
				}
			}
		}
	})

	t.Run("in Failed, health-checks before it moves on", func(t *testing.T) {
		failed := false
		for _, w := range writes() {
			if !w.down {
				break
			}
			if failed && w.phase == learnv1alpha1.PhaseProvisioning {
				checkkit.Expect(t, "Failed until a health check passes", fmt.Sprintf("Failed → Provisioning while the system was down (%s)", show(moves())))
			}
			failed = failed || w.phase == learnv1alpha1.PhaseFailed
		}
	})

	t.Run("in Failed, retries no earlier than status.nextRetryTime", func(t *testing.T) {
		ws := writes()
		for i, w := range ws {
			if w.phase != learnv1alpha1.PhaseFailed || w.nextTry == nil {
				continue
			}
			// The retry is the next write that moves on or records
			// another failure.
			for _, next := range ws[i+1:] {
				if next.phase == w.phase && next.retries == w.retries {
					continue
				}
				if early := w.nextTry.Sub(next.at); early > time.Millisecond {
					checkkit.Expect(t, "Failed to wait for status.nextRetryTime before the retry (a watch event wakes it early)",
						fmt.Sprintf("%s written %s before the nextRetryTime of retries %d", describeWrite(next), early.Round(time.Millisecond), w.retries))
				}
				break
			}
		}
	})

	t.Run("backs off exponentially, in status", func(t *testing.T) {
		seen := map[int32]time.Duration{}
		for _, w := range writes() {
			if w.phase == learnv1alpha1.PhaseFailed && w.nextTry != nil && w.lastFailure != nil {
				seen[w.retries] = w.nextTry.Sub(w.lastFailure.Time)
			}
		}
		for n := int32(1); n <= 2; n++ {
			if got, want := seen[n], policy.Delay(int(n)-1); got != want {
				checkkit.Expect(t, "status.nextRetryTime − lastFailureTime = Backoff.Delay(retries-1) = %s at status.retries %d",
					fmt.Sprintf("%s (retries seen: %v)", got, seen), want, n)
			}
		}
	})

	t.Run(fmt.Sprintf("the breaker opens after %d failed calls (reason CircuitOpen)", threshold), func(t *testing.T) {
		if !circuitOpen() {
			checkkit.Expect(t, "condition %s=False reason %s while the breaker refuses calls", fmt.Sprintf("phases %s", show(moves())),
				learnv1alpha1.ConditionExternalSystemAvailable, learnv1alpha1.ReasonCircuitOpen)
		}
	})

	t.Run(fmt.Sprintf("no calls for %s once the breaker opened", cooldown), func(t *testing.T) {
		if call, gap, ok := callThroughOpen(); ok {
			checkkit.Expect(t, "at least %s between calls once the breaker opened", fmt.Sprintf("a %s call %s after the last failure", call.Step, gap.Round(time.Millisecond)), cooldown)
		}
	})

	t.Run("creates the credentials Secret once, owned", func(t *testing.T) {
		var s corev1.Secret
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: idempotency.SecretName(db.Name)}, &s); err != nil {
			checkkit.Expect(t, "Secret %s (made by your idempotency.EnsureSecret, exercise 3)", err.Error(), idempotency.SecretName(db.Name))
		}
		if metav1.GetControllerOf(&s) == nil {
			checkkit.Expect(t, "the Secret owned by the Database", "no owner")
		}
		// Created once, by a create or by a server-side apply (which
		// creates what is missing and changes nothing that is right).
		creates, applies := 0, 0
		for _, e := range cluster.OfKind(cluster.ForKey(obs.Events(), key), observe.KindClient) {
			if e.Object == "Secret" && e.Outcome == observe.OutcomeOK {
				switch e.Verb {
				case "create":
					creates++
				case "apply":
					applies++
				}
			}
		}
		if creates > 1 || creates == 0 && applies == 0 {
			checkkit.Expect(t, "the Secret created once (a create or a server-side apply)", fmt.Sprintf("%d creates", creates))
		}
	})
}

// conflictText marks the optimistic-concurrency conflict the check makes
// one status write fail with.
const conflictText = "the object has been modified"

func describeWrite(w written) string {
	if w.phase == learnv1alpha1.PhaseFailed {
		return fmt.Sprintf("Failed (retries %d)", w.retries)
	}
	return string(w.phase)
}

// byReconcile groups calls by the reconcile that made them, each group in
// the order of the calls.
func byReconcile(calls []cluster.Call) [][]cluster.Call {
	var out [][]cluster.Call
	at := map[string]int{}
	for _, c := range calls {
		i, ok := at[c.Reconcile]
		if !ok {
			i = len(out)
			at[c.Reconcile] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], c)
	}
	return out
}
