package operator_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator"
	"github.com/operator-lab/lab/operator/api/v1alpha1"
	"github.com/operator-lab/lab/operator/database"
	"github.com/operator-lab/lab/operator/internal/optest"
)

func newDatabase(ns, name string) *v1alpha1.Database {
	return &v1alpha1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.DatabaseSpec{
			Image: "postgres:17", Replicas: 1, DatabaseName: "app", Username: "app", Storage: "1Gi",
		},
	}
}

func createDatabase(t testing.TB, env *optest.Env, name string) *v1alpha1.Database {
	t.Helper()
	db := newDatabase(env.Namespace, name)
	if err := env.Client.Create(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return db
}

var happyPath = []string{
	"→Pending", "Pending→Provisioning", "Provisioning→Configuring", "Configuring→Deploying",
	"Deploying→Verifying", "Verifying→Ready",
}

// TestDatabaseReachesReadyThroughEveryPhaseThenStaysQuiet creates a
// Database, follows it through every phase, checks each transition was
// persisted, then reconciles the Ready object 50 more times and checks that
// nothing was written.
func TestDatabaseReachesReadyThroughEveryPhaseThenStaysQuiet(t *testing.T) {
	t.Parallel()
	env := optest.Start(t, optest.Options{Lab: operator.Lab44, Set: "timescale=100"})
	ctx := context.Background()
	createDatabase(t, env, "orders")
	key := env.Namespace + "/orders"
	events := env.WaitFor(t, waitLong, "phase Ready", func(evs []observe.Event) bool {
		return reachedPhase(evs, key, "Ready", 0)
	})
	if got := phases(events, key); !slices.Equal(got, happyPath) {
		t.Fatalf("phases = %v, want %v\n%s", got, happyPath, optest.Dump(events))
	}
	// Each phase event is emitted only after its Status().Update succeeded,
	// in the same reconcile: check that pairing.
	for i, e := range events {
		if e.Kind != observe.KindPhase || e.Key != key {
			continue
		}
		persisted := slices.ContainsFunc(events[:i], func(c observe.Event) bool {
			return c.Kind == observe.KindClient && c.Verb == "status.update" && c.Outcome == observe.OutcomeOK && c.ReconcileID == e.ReconcileID
		})
		if !persisted {
			t.Errorf("phase %s→%s has no successful status.update in its reconcile %s", e.From, e.To, e.ReconcileID)
		}
	}

	db := &v1alpha1.Database{}
	if err := env.Client.Get(ctx, clientKey(env.Namespace, "orders"), db); err != nil {
		t.Fatal(err)
	}
	st := db.Status
	if st.Phase != v1alpha1.PhaseReady || !st.Ready || st.Endpoint == "" || st.SecretName != database.SecretName("orders") ||
		st.ObservedGeneration != db.Generation || st.Retries != 0 {
		t.Fatalf("persisted status = %+v", st)
	}
	if c := findCondition(st.Conditions, v1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != db.Generation {
		t.Fatalf("Ready condition = %+v", c)
	}
	secret := &corev1.Secret{}
	if err := env.Client.Get(ctx, clientKey(env.Namespace, database.SecretName("orders")), secret); err != nil {
		t.Fatal(err)
	}
	if len(secret.Data[database.SecretKeyPassword]) < 16 || string(secret.Data[database.SecretKeyEndpoint]) != st.Endpoint {
		t.Errorf("Secret data = %v", secret.Data)
	}
	if owner := metav1.GetControllerOf(secret); owner == nil || owner.Kind != "Database" {
		t.Errorf("Secret controller owner = %+v", owner)
	}

	// 50 more reconciles of the Ready object: reads only. They run under a
	// scope of their own so their events can be told from the manager's, and
	// only once the cache they read has the Ready object and what it owns.
	env.WaitForCache(t, waitLong, db, secret,
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: env.Namespace, Name: database.WorkloadName("orders")}})
	before := len(env.Recorder.Events())
	for i := 0; i < 50; i++ {
		ctx := observe.WithScope(ctx, observe.Scope{Controller: "test", Key: key, ReconcileID: fmt.Sprintf("direct-%d", i)})
		res, err := env.Operator.Database.Reconcile(ctx, reconcile.Request{NamespacedName: clientKey(env.Namespace, "orders")})
		if err != nil || res != (reconcile.Result{}) {
			t.Fatalf("reconcile %d of a Ready database = %+v, %v", i, res, err)
		}
	}
	all := env.Recorder.Events()
	direct := 0
	for _, e := range all[before:] {
		if e.Controller != "test" {
			continue
		}
		direct++
		if e.Kind == observe.KindClient && e.Verb != "get" && e.Verb != "list" {
			t.Errorf("a reconcile of a Ready database wrote: %s %s/%s", e.Verb, e.Object, e.Name)
		}
		if e.Kind == observe.KindExternal {
			t.Errorf("a reconcile of a Ready database called the external system: %s", e.Op)
		}
	}
	if direct < 150 { // each reconcile reads the Database, the Secret and the StatefulSet
		t.Errorf("only %d events from the 50 direct reconciles", direct)
	}
	secretCreates := 0
	for _, e := range all {
		if e.Kind == observe.KindClient && e.Verb == "create" && e.Object == "Secret" {
			secretCreates++
		}
	}
	if secretCreates != 1 {
		t.Errorf("Secret creates over the whole run = %d, want 1", secretCreates)
	}
}

func TestSpecChangeOnReadyDatabaseGoesThroughUpdating(t *testing.T) {
	t.Parallel()
	env := optest.Start(t, optest.Options{Lab: operator.Lab44, Set: "timescale=100"})
	ctx := context.Background()
	db := createDatabase(t, env, "billing")
	key := env.Namespace + "/billing"
	env.WaitFor(t, waitLong, "phase Ready", func(evs []observe.Event) bool { return reachedPhase(evs, key, "Ready", 0) })

	update(t, env, db, func(d *v1alpha1.Database) { d.Spec.Replicas = 3; d.Spec.Image = "postgres:18" })
	events := env.WaitFor(t, waitLong, "Ready again", func(evs []observe.Event) bool {
		return reachedPhase(evs, key, "Ready", len(happyPath))
	})
	got := phases(events, key)
	want := append(slices.Clone(happyPath), "Ready→Updating", "Updating→Verifying", "Verifying→Ready")
	if !slices.Equal(got, want) {
		t.Fatalf("phases = %v, want %v\n%s", got, want, optest.Dump(events))
	}
	sts := &appsv1.StatefulSet{}
	if err := env.Client.Get(ctx, clientKey(env.Namespace, database.WorkloadName("billing")), sts); err != nil {
		t.Fatal(err)
	}
	if *sts.Spec.Replicas != 3 || sts.Spec.Template.Spec.Containers[0].Image != "postgres:18" {
		t.Errorf("StatefulSet after the update: replicas %d, image %s", *sts.Spec.Replicas, sts.Spec.Template.Spec.Containers[0].Image)
	}
	fresh := &v1alpha1.Database{}
	if err := env.Client.Get(ctx, clientKey(env.Namespace, "billing"), fresh); err != nil {
		t.Fatal(err)
	}
	if fresh.Generation != 2 || fresh.Status.ObservedGeneration != 2 || !fresh.Status.Ready {
		t.Errorf("generation %d, observedGeneration %d, ready %v", fresh.Generation, fresh.Status.ObservedGeneration, fresh.Status.Ready)
	}
}

// TestExternalOutageShowsConditionBackoffBreakerAndRecovery runs a Database
// into a down external system, checks the condition, the delayed retries
// and the breaker opening, then brings the system back and checks recovery.
func TestExternalOutageShowsConditionBackoffBreakerAndRecovery(t *testing.T) {
	t.Parallel()
	// timescale 20: backoff 250ms, 500ms, 1s, 2s...; breaker open for 3s.
	env := optest.Start(t, optest.Options{Lab: operator.Lab44, Set: "timescale=20,external=down,requeue=after,backoff=lesson,breaker=on"})
	ctx := context.Background()
	createDatabase(t, env, "ledger")
	key := env.Namespace + "/ledger"

	env.WaitFor(t, waitLong, "the breaker to open", func(evs []observe.Event) bool {
		return slices.ContainsFunc(evs, func(e observe.Event) bool {
			return e.Kind == observe.KindBreaker && e.Breaker().Transition() && e.To == "open"
		})
	})
	db := &v1alpha1.Database{}
	if err := env.Client.Get(ctx, clientKey(env.Namespace, "ledger"), db); err != nil {
		t.Fatal(err)
	}
	ext := findCondition(db.Status.Conditions, v1alpha1.ConditionExternalSystemAvailable)
	// The breaker counts calls; Retries counts persisted retries, which can
	// be fewer (a reconcile working from a stale cached copy may make a call
	// whose result it cannot persist).
	if db.Status.Phase != v1alpha1.PhaseFailed || ext == nil || ext.Status != metav1.ConditionFalse || db.Status.Retries < 1 ||
		db.Status.NextRetryTime == nil || db.Status.LastFailureTime == nil {
		t.Fatalf("status during the outage: %+v", db.Status)
	}

	if err := env.Switches.Set("external", "healthy"); err != nil {
		t.Fatal(err)
	}
	events := env.WaitFor(t, waitLong, "recovery to Ready", func(evs []observe.Event) bool {
		return reachedPhase(evs, key, "Ready", 0)
	})

	// Retries were delayed by the lesson backoff, each persisted delay
	// returned as RequeueAfter by the reconcile that chose it.
	var backoffs []observe.Event
	for _, e := range events {
		if e.Kind == observe.KindBackoff && e.Key == key {
			backoffs = append(backoffs, e)
		}
	}
	if len(backoffs) < 5 {
		t.Fatalf("%d backoff events, want at least 5\n%s", len(backoffs), optest.Dump(events))
	}
	for i, b := range backoffs {
		want := database.LessonBackoff(int32(i+1)) / 20
		if b.Attempt != i+1 || b.Delay.D() != want {
			t.Errorf("backoff %d: attempt %d delay %s, want attempt %d delay %s", i, b.Attempt, b.Delay, i+1, want)
		}
		end := slices.IndexFunc(events, func(e observe.Event) bool {
			return e.Kind == observe.KindReconcileEnd && e.ReconcileID == b.ReconcileID
		})
		if end < 0 || events[end].Result != observe.ResultRequeueAfter || events[end].RequeueAfter != b.Delay {
			t.Errorf("backoff %d: its reconcile did not return RequeueAfter %s", i, b.Delay)
		}
	}

	// Breaker: opened after 5 failures, probed after its timeout, closed on success.
	var breaker []string
	for _, e := range events {
		if e.Kind == observe.KindBreaker && e.Breaker().Transition() {
			breaker = append(breaker, e.From+"→"+e.To)
		}
	}
	if len(breaker) < 3 || breaker[0] != "closed→open" || breaker[len(breaker)-1] != "half-open→closed" {
		t.Errorf("breaker transitions = %v", breaker)
	}
	// The condition went False, then True again.
	var ext2 []string
	for _, e := range events {
		if e.Kind == observe.KindCondition && e.Key == key && e.Type == v1alpha1.ConditionExternalSystemAvailable {
			ext2 = append(ext2, e.Status)
		}
	}
	if !slices.Contains(ext2, "False") || ext2[len(ext2)-1] != "True" {
		t.Errorf("ExternalSystemAvailable condition events = %v", ext2)
	}
	got := phases(events, key)
	if !slices.Contains(got, "Provisioning→Failed") || !slices.Contains(got, "Failed→Provisioning") {
		t.Errorf("phases = %v, want Provisioning→Failed … Failed→Provisioning", got)
	}
}

// TestLessonBackoffDelaysDoubleUpToTheCap uses a large timescale to run
// through the whole backoff range: 5s,10s,…,160s, then 5m, 5m, divided by
// 10000.
func TestLessonBackoffDelaysDoubleUpToTheCap(t *testing.T) {
	t.Parallel()
	env := optest.Start(t, optest.Options{Lab: operator.Lab44, Set: "timescale=10000,external=down,requeue=after,backoff=lesson,breaker=off"})
	createDatabase(t, env, "cache")
	key := env.Namespace + "/cache"
	events := env.WaitFor(t, waitLong, "nine backoff events", func(evs []observe.Event) bool {
		return count(evs, key, observe.KindBackoff, "") >= 9
	})
	var got []string
	for _, e := range events {
		if e.Kind == observe.KindBackoff && e.Key == key {
			got = append(got, e.Delay.String())
		}
	}
	want := []string{"500µs", "1ms", "2ms", "4ms", "8ms", "16ms", "30ms", "30ms", "30ms"}
	if !slices.Equal(got[:9], want) {
		t.Fatalf("backoff delays = %v, want %v", got[:9], want)
	}
}

// TestRequeueErrorLeavesBackoffToTheQueue: with requeue=error the controller
// does not schedule retries itself, so it writes no status per attempt, and
// the queue's rate limiter delays grow per failure.
func TestRequeueErrorLeavesBackoffToTheQueue(t *testing.T) {
	t.Parallel()
	env := optest.Start(t, optest.Options{Lab: operator.Lab44, Set: "external=down,requeue=error,breaker=off,ratelimit=off"})
	createDatabase(t, env, "queue")
	key := env.Namespace + "/queue"
	events := env.WaitFor(t, waitLong, "six rate-limited requeues", func(evs []observe.Event) bool {
		return count(evs, key, observe.KindQueueAddRateLimited, "") >= 6
	})
	var delays []time.Duration
	for _, e := range events {
		if e.Kind == observe.KindQueueAddRateLimited && e.Key == key {
			delays = append(delays, e.Delay.D())
		}
	}
	for i := 1; i < len(delays); i++ {
		if delays[i] <= delays[i-1] {
			t.Errorf("rate-limited delays do not grow: %v", delays)
			break
		}
	}
	writes := 0
	for _, e := range events {
		if e.Kind == observe.KindClient && e.Verb == "status.update" && e.Outcome == observe.OutcomeOK {
			writes++
		}
	}
	// ""→Pending, Pending→Provisioning, Provisioning→Failed: three writes, then
	// none per retry. (A reconcile working from a stale cached copy may try
	// one more and get a conflict; only successful writes count.)
	if writes != 3 {
		t.Errorf("status writes = %d, want 3\n%s", writes, optest.Dump(events))
	}
	if n := count(events, key, observe.KindBackoff, ""); n != 0 {
		t.Errorf("%d backoff events with requeue=error, want none (the queue backs off)", n)
	}
}

// TestConcurrentWorkersWithFlakyExternal runs four workers over four
// databases against a flaky external system (run it with -race).
func TestConcurrentWorkersWithFlakyExternal(t *testing.T) {
	t.Parallel()
	env := optest.Start(t, optest.Options{Lab: operator.Lab44, Set: "timescale=200,workers=4,external=flaky,flakiness=0.3,requeue=after"})
	names := []string{"a", "b", "c", "d"}
	for _, n := range names {
		createDatabase(t, env, n)
	}
	events := env.WaitFor(t, 2*waitLong, "all four Ready", func(evs []observe.Event) bool {
		for _, n := range names {
			if !reachedPhase(evs, env.Namespace+"/"+n, "Ready", 0) {
				return false
			}
		}
		return true
	})
	// Several reconciles ran at the same time: some reconcile.start comes
	// before the previous reconcile.end.
	running, most := 0, 0
	for _, e := range events {
		switch e.Kind {
		case observe.KindReconcileStart:
			running++
			most = max(most, running)
		case observe.KindReconcileEnd:
			running--
		}
	}
	if most < 2 {
		t.Errorf("at most %d reconciles ran at once with workers=4", most)
	}
	if p := env.Operator.External.Provisioned(); p != len(names) {
		t.Errorf("external system provisioned %d databases, want %d (Provision must be idempotent)", p, len(names))
	}
	for _, e := range events {
		if e.Kind == observe.KindReconcileEnd && e.Result == observe.ResultError && !strings.Contains(e.Error, "external") {
			t.Errorf("unexpected reconcile error: %s", e.Error)
		}
	}
}

// TestRateLimiterDefersCallsWithoutBlockingWorkers creates several
// databases at once so the external calls exceed the client-side limit:
// the reconciles that would have to wait return RequeueAfter instead.
func TestRateLimiterDefersCallsWithoutBlockingWorkers(t *testing.T) {
	t.Parallel()
	// 2 calls/s with a burst of 3, against 3 calls per database: 15 calls
	// stay under the limit only if the reconciles spread over 6 s, which
	// even a loaded machine does not do (at 4 calls/s for 9 calls, a
	// loaded CI run spread them over the 1.5 s that took).
	env := optest.Start(t, optest.Options{Lab: operator.Lab44, Set: "timescale=1,ratelimit=on"})
	names := []string{"r1", "r2", "r3", "r4", "r5"}
	for _, n := range names {
		createDatabase(t, env, n)
	}
	events := env.WaitFor(t, 2*waitLong, "all Ready", func(evs []observe.Event) bool {
		for _, n := range names {
			if !reachedPhase(evs, env.Namespace+"/"+n, "Ready", 0) {
				return false
			}
		}
		return true
	})
	limited, allowed := 0, 0
	for _, e := range events {
		if e.Kind != observe.KindRateLimit {
			continue
		}
		// Every check is reported: the calls let through at once too, so
		// that the waits can be counted against all calls.
		if c := e.RateLimit(); c.Wait == 0 {
			allowed += c.Calls
			continue
		}
		limited++
		end := slices.IndexFunc(events, func(x observe.Event) bool {
			return x.Kind == observe.KindReconcileEnd && x.ReconcileID == e.ReconcileID
		})
		if end < 0 || events[end].Result != observe.ResultRequeueAfter || events[end].RequeueAfter != e.Wait || e.Wait <= 0 {
			t.Errorf("ratelimit wait %s was not returned as RequeueAfter", e.Wait)
		}
		// The worker did not sleep out the wait.
		if end >= 0 && events[end].DurationMs >= float64(e.Wait.D().Milliseconds()) && e.Wait.D() > 50*time.Millisecond {
			t.Errorf("reconcile took %.1fms for a %s wait: the worker blocked", events[end].DurationMs, e.Wait)
		}
	}
	if limited == 0 {
		t.Fatalf("no ratelimit events for 15 calls at 2/s with a burst of 3\n%s", optest.Dump(events))
	}
	// Each Database's health check, provision and ping were let through.
	if allowed < 3*len(names) {
		t.Errorf("%d calls allowed at once by the rate limiter, want at least %d\n%s", allowed, 3*len(names), optest.Dump(events))
	}
}
