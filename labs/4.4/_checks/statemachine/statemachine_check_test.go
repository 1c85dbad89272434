package statemachine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/operator-lab/lab/labs/checkkit"
	"github.com/operator-lab/lab/labs/checkkit/cluster"
	"github.com/operator-lab/lab/observe"

	learnv1alpha1 "example.com/lab44/api/v1alpha1"
	"example.com/lab44/external"
	"example.com/lab44/statemachine"
)

// written is one persisted status, and the reconcile (its ID) that wrote it.
type written struct {
	reconcile               string
	at                      time.Time
	phase                   learnv1alpha1.Phase
	ready                   bool
	generation, observedGen int64
	retries                 int32
	nextRetry               *metav1.MicroTime
	cond, ext               *metav1.Condition
}

type statusLog struct {
	mu      sync.Mutex
	current atomic.Value // the ID of the reconcile running
	byName  map[string][]written
}

func (l *statusLog) record(obj client.Object) {
	db, ok := obj.(*learnv1alpha1.Database)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byName[db.Name] = append(l.byName[db.Name], written{
		reconcile: l.current.Load().(string), at: time.Now(),
		phase: db.Status.Phase, ready: db.Status.Ready, generation: db.Generation, observedGen: db.Status.ObservedGeneration,
		retries: db.Status.Retries, nextRetry: db.Status.NextRetryTime.DeepCopy(),
		cond: meta.FindStatusCondition(db.Status.Conditions, learnv1alpha1.ConditionReady),
		ext:  meta.FindStatusCondition(db.Status.Conditions, learnv1alpha1.ConditionExternalSystemAvailable),
	})
}

// names returns the names of the Databases written, in order.
func (l *statusLog) names() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	names := make([]string, 0, len(l.byName))
	for name := range l.byName {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

func (l *statusLog) of(name string) []written {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]written(nil), l.byName[name]...)
}

// moves keeps the writes that changed the phase.
func moves(ws []written) []written {
	var out []written
	prev := learnv1alpha1.Phase("")
	for _, w := range ws {
		if w.phase != prev {
			out = append(out, w)
			prev = w.phase
		}
	}
	return out
}

// phases renders the phases of ws, the first maxPhases of them: a
// reconciler that goes round in circles must not fill the screen.
func phases(ws []written) string {
	const maxPhases = 12
	parts := make([]string, 0, min(len(ws), maxPhases+1))
	for _, w := range ws[:min(len(ws), maxPhases)] {
		parts = append(parts, string(w.phase))
	}
	if len(ws) > maxPhases {
		parts = append(parts, fmt.Sprintf("… %d more", len(ws)-maxPhases))
	}
	return strings.Join(parts, " → ")
}

// serial notes the reconcile that runs (the controller runs one at a
// time), so each status write is known by the reconcile that made it.
type serial struct {
	log *statusLog
	r   reconcile.Reconciler
}

func (s serial) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	s.log.current.Store(observe.ScopeFrom(ctx).ReconcileID)
	return s.r.Reconcile(ctx, req)
}

func TestStateMachine(t *testing.T) {
	ctx := context.Background()
	obs := cluster.Observe(t)
	cfg := cluster.Config(t)
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = learnv1alpha1.AddToScheme(scheme)
	system := cluster.NewFakeSystem(external.ErrUnavailable)
	log := &statusLog{byName: map[string][]written{}}
	log.current.Store("")
	retry := time.Duration(checkkit.Between(800, 1500)) * time.Millisecond
	c := cluster.Client(t, cfg, scheme)
	ns := cluster.Namespace(t, c)
	var configured, deployed sync.Map // name → calls
	count := func(m *sync.Map) func(context.Context, *learnv1alpha1.Database) error {
		return func(_ context.Context, db *learnv1alpha1.Database) error {
			n, _ := m.LoadOrStore(db.Name, new(atomic.Int32))
			n.(*atomic.Int32).Add(1)
			return nil
		}
	}
	// An uncached client: what the reconciler reads is what it last wrote,
	// so the grading does not depend on how fast the cache is. One
	// Database's second status write fails with a Conflict.
	direct := cluster.Client(t, cfg, scheme)
	conflicted := checkkit.Name("audit")
	failing, conflictHappened := cluster.FailStatusWrite(direct, conflicted, 2,
		apierrors.NewConflict(learnv1alpha1.GroupVersion.WithResource("databases").GroupResource(), conflicted, errors.New(conflictText)))
	cluster.StartManager(t, cfg, scheme, ns, func(mgr ctrl.Manager) error {
		r := &statemachine.Reconciler{
			Client:     cluster.StatusWrites(observe.Client(obs.Bus, failing), log.record),
			System:     system,
			Configure:  count(&configured),
			Deploy:     count(&deployed),
			RetryDelay: retry,
		}
		return ctrl.NewControllerManagedBy(mgr).Named("database").For(&learnv1alpha1.Database{}).
			WithOptions(obs.QueueOptions()).Complete(observe.Reconciler(obs.Bus, "database", nil, system.Attribute(serial{log, r})))
	})
	newDB := func(prefix string) *learnv1alpha1.Database {
		return &learnv1alpha1.Database{
			ObjectMeta: metav1.ObjectMeta{Name: checkkit.Name(prefix), Namespace: ns},
			Spec: learnv1alpha1.DatabaseSpec{
				Image: "postgres:17", Replicas: 1, DatabaseName: checkkit.Pick("orders", "shop", "app"),
				Username: checkkit.Pick("app", "owner"), Storage: "1Gi",
			},
		}
	}
	// Every phase that calls the external system fails once, for a
	// Database of its own: a bug in one phase's failure path cannot hide
	// behind a lucky pick.
	happy := newDB("orders")
	flaky := map[learnv1alpha1.Phase]*learnv1alpha1.Database{
		learnv1alpha1.PhaseProvisioning: newDB("billing"), learnv1alpha1.PhaseVerifying: newDB("ledger"),
	}
	system.FailStep(flaky[learnv1alpha1.PhaseProvisioning].Name, cluster.StepProvision, 1)
	system.FailStep(flaky[learnv1alpha1.PhaseVerifying].Name, cluster.StepPing, 1)
	audit := newDB("audit")
	audit.Name = conflicted
	for _, db := range []*learnv1alpha1.Database{happy, flaky[learnv1alpha1.PhaseProvisioning], flaky[learnv1alpha1.PhaseVerifying], audit} {
		if err := c.Create(ctx, db); err != nil {
			t.Fatalf("create Database: %v", err)
		}
	}

	// waitReady waits for the Database name to reach Ready at generation,
	// through Failed as many times as its external calls are made to fail.
	waitReady := func(t *testing.T, name string, generation int64, failures int) []written {
		t.Helper()
		// Another Database going round in circles keeps this one queued,
		// so the controller never counts as done with it.
		done := obs.DoneWith(ns+"/"+name, 0)
		checkkit.EventuallyUnless(t, fmt.Sprintf("Database %s to reach Ready (generation %d)", name, generation), func() error {
			ws := log.of(name)
			n := len(ws)
			// Wrong already, whatever comes next: more trips through
			// Failed than the system made calls fail, or an update of a
			// spec that did not change.
			ms := moves(ws)
			if trips := countPhase(ms, learnv1alpha1.PhaseFailed); trips > failures {
				want := "without going through Failed (none of its external calls fails)"
				if failures > 0 {
					want = "through Failed once (one of its external calls fails once)"
				}
				checkkit.Expect(t, "Database %s to reach Ready (generation %d) %s", fmt.Sprintf("persisted phases %s; its failed external calls: %s",
					phases(ms), failedCalls(system.Calls(), ns+"/"+name)), name, generation, want)
			}
			// (Any Database's: one that goes round in circles can keep the
			// worker from the others, so this one may never get a turn.)
			for _, other := range log.names() {
				ows := log.of(other)
				for _, w := range ows {
					if w.phase == learnv1alpha1.PhaseReady && w.observedGen != w.generation {
						// Wrong already: no later write can make this one right.
						checkkit.Expect(t, "Database %s Ready with status.observedGeneration %d, the generation it verified",
							fmt.Sprintf("observedGeneration %d", w.observedGen), other, w.generation)
					}
				}
				oms := moves(ows)
				for i := 1; i < len(oms); i++ {
					if oms[i-1].phase == learnv1alpha1.PhaseReady && oms[i].phase == learnv1alpha1.PhaseUpdating && oms[i].generation == oms[i-1].observedGen {
						checkkit.Expect(t, "Ready to stay Ready while the spec is unchanged (generation = status.observedGeneration %d)",
							fmt.Sprintf("Database %s go Ready → Updating at generation %d in %s", other, oms[i].generation, phases(oms)), oms[i-1].observedGen)
					}
				}
			}
			if n > 0 && ws[n-1].phase == learnv1alpha1.PhaseReady && ws[n-1].observedGen == generation {
				return nil
			}
			return fmt.Errorf("persisted phases %s", orNothing(phases(moves(log.of(name)))))
		}, done)
		return log.of(name)
	}
	// checkWrites holds every persisted move to the operator's state
	// machine, one phase per reconcile, with the conditions of the phase.
	checkWrites := func(t *testing.T, ws []written) {
		t.Helper()
		prev := learnv1alpha1.Phase("")
		perReconcile := map[string]int{}
		for _, w := range moves(ws) {
			if !learnv1alpha1.CanTransition(prev, w.phase) {
				checkkit.Expect(t, "only moves learnv1alpha1.CanTransition allows (%s → one of %v)",
					fmt.Sprintf("%s → %s in %s", orNothing(string(prev)), w.phase, phases(moves(ws))), orNothing(string(prev)), learnv1alpha1.NextPhases(prev))
			}
			if perReconcile[w.reconcile]++; perReconcile[w.reconcile] == 2 {
				checkkit.Expect(t, "one phase per reconcile, each persisted", fmt.Sprintf("one reconcile persisted two moves, the second to %s, in %s", w.phase, phases(moves(ws))))
			}
			switch {
			case w.phase == learnv1alpha1.PhaseReady:
				if !w.ready || w.observedGen != w.generation || w.cond == nil || w.cond.Status != metav1.ConditionTrue || w.cond.Reason != learnv1alpha1.ReasonReconciled {
					checkkit.Expect(t, "on Ready: status.ready, observedGeneration %d and condition Ready=True reason %s",
						fmt.Sprintf("ready %v, observedGeneration %d, %s", w.ready, w.observedGen, describe(w.cond)), w.generation, learnv1alpha1.ReasonReconciled)
				}
				if w.retries != 0 {
					checkkit.Expect(t, "status.retries 0 once Ready", fmt.Sprintf("%d", w.retries))
				}
			case w.ready || w.cond == nil || w.cond.Status != metav1.ConditionFalse:
				checkkit.Expect(t, "condition Ready=False and status.ready false in phase %s", fmt.Sprintf("ready %v, %s", w.ready, describe(w.cond)), w.phase)
			}
			prev = w.phase
		}
	}

	happyReady := false
	t.Run("walks the happy path, one persisted phase per reconcile", func(t *testing.T) {
		ws := waitReady(t, happy.Name, 1, 0)
		happyReady = true
		checkWrites(t, ws)
		want := "Pending → Provisioning → Configuring → Deploying → Verifying → Ready"
		if got := phases(moves(ws)); got != want {
			checkkit.Expect(t, "persisted phases "+want+" (learnv1alpha1.HappyPath)", got)
		}
		for what, m := range map[string]*sync.Map{"Configure": &configured, "Deploy": &deployed} {
			calls := int32(0)
			if n, ok := m.Load(happy.Name); ok {
				calls = n.(*atomic.Int32).Load()
			}
			if calls != 1 {
				checkkit.Expect(t, "%s called once, in its own phase", fmt.Sprintf("%d calls", calls), what)
			}
		}
	})

	for _, failing := range []learnv1alpha1.Phase{learnv1alpha1.PhaseProvisioning, learnv1alpha1.PhaseVerifying} {
		t.Run(fmt.Sprintf("a failed external call in %s goes through Failed and retries from Provisioning", failing), func(t *testing.T) {
			failedOnce(t, waitReady(t, flaky[failing].Name, 1, 1), failing, retry, checkWrites, system)
		})
	}

	t.Run("a status write that fails is returned, and the move made again", func(t *testing.T) {
		key := ns + "/" + conflicted
		var failedWrite observe.Event
		checkkit.EventuallyUnless(t, "the failed status write of "+conflicted, func() error {
			for _, e := range cluster.OfKind(cluster.ForKey(obs.Events(), key), observe.KindClient) {
				if conflictHappened() && strings.HasPrefix(e.Verb, "status.") && e.Outcome != observe.OutcomeOK {
					failedWrite = e
					return nil
				}
			}
			return fmt.Errorf("persisted phases %s", orNothing(phases(moves(log.of(conflicted)))))
		}, obs.DoneWith(key, 0))
		var end observe.Event
		checkkit.Eventually(t, "the end of the reconcile whose status write failed", func() error {
			for _, e := range cluster.OfKind(cluster.ForKey(obs.Events(), key), observe.KindReconcileEnd) {
				if e.ReconcileID == failedWrite.ReconcileID {
					end = e
					return nil
				}
			}
			return errors.New("it has not ended")
		})
		// Returning the error is the lesson's answer; a requeue of one's
		// own brings the retry too. Success alone loses the move.
		if end.Result == observe.ResultSuccess {
			checkkit.Expect(t, "the reconcile whose %s failed (Conflict) to return that error (or to requeue)", fmt.Sprintf("%s: the move was lost, and nothing brings the next reconcile", end.Brief()), failedWrite.Verb)
		}
		checkWrites(t, waitReady(t, conflicted, 1, 0))
	})

	t.Run("a spec change takes Ready through Updating and Verifying", func(t *testing.T) {
		if !happyReady {
			t.Skip("needs a Database that reached Ready first")
		}
		var latest learnv1alpha1.Database
		if err := c.Get(ctx, client.ObjectKeyFromObject(happy), &latest); err != nil {
			t.Fatal(err)
		}
		before := len(log.of(happy.Name))
		callsOf := func(m *sync.Map) int32 {
			if n, ok := m.Load(happy.Name); ok {
				return n.(*atomic.Int32).Load()
			}
			return 0
		}
		configuredBefore, deployedBefore := callsOf(&configured), callsOf(&deployed)
		latest.Spec.Replicas = int32(checkkit.Between(2, 3))
		if err := c.Update(ctx, &latest); err != nil {
			t.Fatal(err)
		}
		ws := waitReady(t, happy.Name, latest.Generation, 0)
		checkWrites(t, ws)
		want := "Updating → Verifying → Ready"
		if got := phases(moves(ws[before-1:])[1:]); got != want {
			checkkit.Expect(t, "persisted phases "+want+" after the spec change", got)
		}
		for what, n := range map[string]int32{"Configure": callsOf(&configured) - configuredBefore, "Deploy": callsOf(&deployed) - deployedBefore} {
			if n != 1 {
				checkkit.Expect(t, "%s called once in Updating", fmt.Sprintf("%d calls", n), what)
			}
		}
	})

	t.Run("health-checks right before each Provision", func(t *testing.T) {
		for _, calls := range byReconcile(system.Calls()) {
			for i, call := range calls {
				if call.Step == cluster.StepProvision && (i == 0 || calls[i-1].Step != cluster.StepHealthCheck || calls[i-1].Err != nil) {
					checkkit.Expect(t, "a HealthCheck that passes right before Provision of %s, in the same reconcile (the Provisioning step)",
						fmt.Sprintf("Provision after %s", callSteps(calls[:i])), call.Name)
				}
			}
		}
	})

	t.Run("failures are phases, not errors", func(t *testing.T) {
		for _, e := range cluster.OfKind(obs.Events(), observe.KindReconcileEnd) {
			if e.Result == observe.ResultError && !strings.Contains(e.Error, conflictText) {
				checkkit.Expect(t, "no reconcile errors (a failed external call is the Failed phase plus RequeueAfter)", e.Brief())
			}
		}
	})
}

// conflictText marks an optimistic-concurrency conflict: retrying it is
// the normal answer, so it does not count as a failure here.
const conflictText = "the object has been modified"

func countPhase(ws []written, p learnv1alpha1.Phase) int {
	n := 0
	for _, w := range ws {
		if w.phase == p {
			n++
		}
	}
	return n
}

// failedCalls renders the failed calls the reconciles of key made.
func failedCalls(calls []cluster.Call, key string) string {
	var parts []string
	for _, c := range calls {
		if c.Key == key && c.Err != nil {
			parts = append(parts, fmt.Sprintf("%s (%v)", c.Step, c.Err))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	if len(parts) > 3 {
		parts = append(parts[:3], fmt.Sprintf("… %d more", len(parts)-3))
	}
	return strings.Join(parts, ", ")
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

// callSteps renders a reconcile's calls to the external system.
func callSteps(calls []cluster.Call) string {
	if len(calls) == 0 {
		return "no external call"
	}
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = c.Step
		if c.Err != nil {
			parts[i] += " (failed)"
		}
	}
	return strings.Join(parts, ", ")
}

func describe(c *metav1.Condition) string {
	if c == nil {
		return "no condition"
	}
	return fmt.Sprintf("%s=%s reason %s", c.Type, c.Status, c.Reason)
}

func orNothing(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// failedOnce checks the persisted moves of a Database whose external call
// in phase failing failed once: failing → Failed, with the condition, the
// retry count and time, and a retry that waits for that time and
// health-checks before it moves on.
func failedOnce(t *testing.T, ws []written, failing learnv1alpha1.Phase, retry time.Duration, checkWrites func(*testing.T, []written), system *cluster.FakeSystem) {
	t.Helper()
	checkWrites(t, ws)
	ms := moves(ws)
	i := -1
	for j, w := range ms {
		if w.phase == learnv1alpha1.PhaseFailed {
			i = j
			break
		}
	}
	if i <= 0 || ms[i-1].phase != failing {
		checkkit.Expect(t, "%s → Failed when its external call fails", phases(ms), failing)
		return
	}
	f := ms[i]
	if f.ext == nil || f.ext.Status != metav1.ConditionFalse || f.ext.Reason != learnv1alpha1.ReasonUnavailable {
		checkkit.Expect(t, "condition %s=False reason %s in Failed", describe(f.ext), learnv1alpha1.ConditionExternalSystemAvailable, learnv1alpha1.ReasonUnavailable)
	}
	if f.retries != 1 || f.nextRetry == nil {
		checkkit.Expect(t, "status.retries 1 and status.nextRetryTime set in Failed", fmt.Sprintf("retries %d, nextRetryTime %v", f.retries, f.nextRetry))
	}
	if i+1 >= len(ms) {
		return
	}
	if f.nextRetry != nil && ms[i+1].at.Before(f.nextRetry.Add(-50*time.Millisecond)) {
		checkkit.Expect(t, "the retry to wait for status.nextRetryTime (%s)", fmt.Sprintf("left Failed %s early", f.nextRetry.Sub(ms[i+1].at).Round(time.Millisecond)), retry)
	}
	// The reconcile that leaves Failed asks the system first.
	calls := system.CallsIn(ms[i+1].reconcile)
	if !slices.ContainsFunc(calls, func(c cluster.Call) bool { return c.Step == cluster.StepHealthCheck && c.Err == nil }) {
		checkkit.Expect(t, "a HealthCheck that passes in the reconcile that moves Failed → %s", callSteps(calls)+" in that reconcile", ms[i+1].phase)
	}
}
