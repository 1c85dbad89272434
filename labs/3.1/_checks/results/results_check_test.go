package results_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/operator-lab/lab/labs/checkkit"
	"github.com/operator-lab/lab/labs/checkkit/cluster"
	"github.com/operator-lab/lab/observe"

	learnv1alpha1 "example.com/lab31/api/v1alpha1"
	"example.com/lab31/results"
)

// world is the fake dependency and sender, answering per HelloWorld name.
type world struct {
	mu       sync.Mutex
	notReady map[string]bool
	depErr   map[string]error
	sendErr  map[string]error
}

func (w *world) Ready(_ context.Context, g *learnv1alpha1.HelloWorld) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.depErr[g.Name]; err != nil {
		return false, err
	}
	return !w.notReady[g.Name], nil
}

func (w *world) Send(_ context.Context, g *learnv1alpha1.HelloWorld) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sendErr[g.Name]
}

// scenario is one HelloWorld and what the queue must do after its first reconcile.
type scenario struct {
	name  string
	greet string
	setup func(w *world, name string)
	// failStatus makes the first status write of this HelloWorld fail.
	failStatus bool
	// retry is the DependencyRetry of the controller that reconciles it
	// (0: the main one's).
	retry   time.Duration
	requeue string // "queue.add_after 23s", "queue.add_rate_limited" or "no requeue"
	result  string // expected reconcile.end result
	// conds: the conditions the stored status must hold afterwards (the
	// API's types and reasons); none checked if empty.
	conds []cond
	// hint is added to the message when the result is not the one expected.
	hint string
}

// cond is one expected condition: its type, status and reason.
type cond struct{ typ, status, reason string }

// returns says in Go what a reconcile.end result stands for.
func returns(result string, after time.Duration) string {
	switch result {
	case observe.ResultSuccess:
		return "ctrl.Result{}, nil"
	case observe.ResultRequeueAfter:
		return fmt.Sprintf("ctrl.Result{RequeueAfter: %s}, nil", after)
	case observe.ResultError:
		return "ctrl.Result{}, err"
	case observe.ResultTerminal:
		return "ctrl.Result{}, reconcile.TerminalError(err)"
	}
	return result
}

// twoDurations returns two different random whole seconds in [lo, hi], so
// no constant a reconciler might return in place of the one it is given
// can match both.
func twoDurations(lo, hi int) (time.Duration, time.Duration) {
	a := checkkit.Seconds(lo, hi)
	for {
		if b := checkkit.Seconds(lo, hi); b != a {
			return a, b
		}
	}
}

// named keeps the events of the HelloWorlds named in names (or, with
// in false, of all others).
func named(in bool, names ...string) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool { return slices.Contains(names, o.GetName()) == in })
}

func TestChoosingTheResult(t *testing.T) {
	ctx := context.Background()
	// Two controllers run the learner's reconciler, each with a
	// DependencyRetry of its own; two rate-limited sends ask for two waits.
	dependencyRetry, otherRetry := twoDurations(11, 45)
	retryAfter, otherRetryAfter := twoDurations(11, 90)
	statusFailure := checkkit.Pick(
		apierrors.NewInternalError(errors.New("etcdserver: request timed out")),
		apierrors.NewServiceUnavailable("the server is currently unable to handle the request"),
	)
	notReady := func(w *world, n string) { w.notReady[n] = true }
	rejected := func(w *world, n string) { w.sendErr[n] = fmt.Errorf("hello %s: %w", n, results.ErrRejected) }
	// Send wraps the rate limit, as a client library would: only errors.As
	// finds it.
	rateLimited := func(after time.Duration) func(w *world, n string) {
		return func(w *world, n string) {
			w.sendErr[n] = fmt.Errorf(checkkit.Pick("send %s", "deliver %s", "post %s")+": %w", n, &results.RateLimitedError{RetryAfter: after})
		}
	}
	const rateLimitHint = "; Send's error wraps the *RateLimitedError (fmt.Errorf with %w): errors.As finds it, a type assertion does not"
	notReadyConds := []cond{
		{learnv1alpha1.ConditionDependencyAvailable, "False", learnv1alpha1.ReasonUnavailable},
		{learnv1alpha1.ConditionReady, "False", learnv1alpha1.ReasonUnavailable},
	}
	scenarios := []scenario{
		{name: "success", requeue: "no requeue", result: observe.ResultSuccess,
			conds: []cond{
				{learnv1alpha1.ConditionDependencyAvailable, "True", learnv1alpha1.ReasonAvailable},
				{learnv1alpha1.ConditionReady, "True", learnv1alpha1.ReasonReconciled},
			}},
		{name: fmt.Sprintf("dependency not ready (DependencyRetry %s)", dependencyRetry),
			setup:   notReady,
			requeue: "queue.add_after " + dependencyRetry.String(), result: observe.ResultRequeueAfter,
			conds: notReadyConds},
		{name: fmt.Sprintf("dependency not ready (DependencyRetry %s)", otherRetry),
			setup: notReady, retry: otherRetry,
			requeue: "queue.add_after " + otherRetry.String(), result: observe.ResultRequeueAfter,
			conds: notReadyConds},
		{name: "dependency check fails",
			setup: func(w *world, n string) {
				w.depErr[n] = errors.New(checkkit.Pick("dial tcp: i/o timeout", "connection refused"))
			},
			requeue: "queue.add_rate_limited", result: observe.ResultError},
		{name: "transient send error",
			setup: func(w *world, n string) {
				w.sendErr[n] = errors.New(checkkit.Pick("connection reset by peer", "503 service unavailable"))
			},
			requeue: "queue.add_rate_limited", result: observe.ResultError},
		{name: "message rejected (permanent error)",
			setup:   rejected,
			requeue: "no requeue", result: observe.ResultTerminal,
			conds: []cond{
				{learnv1alpha1.ConditionFailed, "True", learnv1alpha1.ReasonInvalidSpec},
				{learnv1alpha1.ConditionReady, "False", learnv1alpha1.ReasonInvalidSpec},
			}},
		{name: fmt.Sprintf("rate limited (retry after %s)", retryAfter),
			setup:   rateLimited(retryAfter),
			requeue: "queue.add_after " + retryAfter.String(), result: observe.ResultRequeueAfter,
			hint: rateLimitHint},
		{name: fmt.Sprintf("rate limited (retry after %s)", otherRetryAfter),
			setup:   rateLimited(otherRetryAfter),
			requeue: "queue.add_after " + otherRetryAfter.String(), result: observe.ResultRequeueAfter,
			hint: rateLimitHint},
		{name: "status write fails while the dependency is not ready",
			setup: notReady, failStatus: true,
			requeue: "queue.add_rate_limited", result: observe.ResultError,
			hint: fmt.Sprintf("; Status().Update failed (%q): the conditions were not saved", statusFailure)},
		{name: "status write fails after a rejection",
			setup: rejected, failStatus: true,
			requeue: "queue.add_rate_limited", result: observe.ResultError,
			hint: fmt.Sprintf("; Status().Update failed (%q): Failed=True is not saved, and a terminal error now would leave it unsaved for good", statusFailure)},
	}
	var other, failing []string // names of the other controller's and of the failing status writes' HelloWorlds
	for i := range scenarios {
		s := &scenarios[i]
		s.greet = checkkit.Name(checkkit.Pick("greet", "hello", "note"))
		if s.retry != 0 {
			other = append(other, s.greet)
		}
		if s.failStatus {
			failing = append(failing, s.greet)
		}
	}

	w := &world{notReady: map[string]bool{}, depErr: map[string]error{}, sendErr: map[string]error{}}
	obs := cluster.Observe(t)
	cfg := cluster.Config(t)
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = learnv1alpha1.AddToScheme(scheme)
	c := cluster.Client(t, cfg, scheme)
	ns := cluster.Namespace(t, c)
	cluster.StartManager(t, cfg, scheme, ns, func(mgr ctrl.Manager) error {
		var api client.Client = mgr.GetClient()
		for _, name := range failing {
			api, _ = cluster.FailStatusWrite(api, name, 1, statusFailure)
		}
		for _, ctl := range []struct {
			name  string
			retry time.Duration
			only  predicate.Predicate
		}{
			{"helloworld", dependencyRetry, named(false, other...)},
			{"helloworld-other-retry", otherRetry, named(true, other...)},
		} {
			r := &results.Reconciler{
				Client:          observe.Client(obs.Bus, api),
				Dependency:      w,
				Sender:          w,
				DependencyRetry: ctl.retry,
			}
			if err := ctrl.NewControllerManagedBy(mgr).
				Named(ctl.name).
				For(&learnv1alpha1.HelloWorld{}, builder.WithPredicates(predicate.GenerationChangedPredicate{}, ctl.only)).
				WithOptions(obs.QueueOptions()).
				Complete(observe.Reconciler(obs.Bus, ctl.name, nil, r)); err != nil {
				return err
			}
		}
		return nil
	})

	for _, s := range scenarios {
		if s.setup != nil {
			s.setup(w, s.greet)
		}
		g := &learnv1alpha1.HelloWorld{
			ObjectMeta: metav1.ObjectMeta{Name: s.greet, Namespace: ns},
			Spec:       learnv1alpha1.HelloWorldSpec{Message: checkkit.Name("msg")},
		}
		if err := c.Create(ctx, g); err != nil {
			t.Fatalf("create HelloWorld: %v", err)
		}
	}

	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			key := ns + "/" + s.greet
			end, requeue := firstDecision(t, obs, key)
			saw := end.Brief() + " (" + requeue + ")"
			failed := end.Result == observe.ResultError || end.Result == observe.ResultTerminal
			want := returns(s.result, queueDelay(s.requeue))
			switch {
			case end.Result != s.result && s.result == observe.ResultRequeueAfter && failed && end.RequeueAfter > 0:
				checkkit.Expect(t, "Reconcile to return %s (%s) with no error: beside an error the controller ignores RequeueAfter and backs off instead", saw, s.result, want)
			case end.Result != s.result:
				checkkit.Expect(t, "Reconcile to return %s (%s)", saw+s.hint, s.result, want)
			case failed && end.RequeueAfter > 0:
				checkkit.Expect(t, "the error returned with an empty ctrl.Result{}: beside an error the controller ignores RequeueAfter (and logs a warning)", saw)
			case requeue != s.requeue:
				checkkit.Expect(t, "%s", requeue+" ("+end.Brief()+")", s.requeue)
			}
			if len(s.conds) > 0 {
				checkConditions(t, c, types.NamespacedName{Namespace: ns, Name: s.greet}, s.conds)
			}
		})
	}
}

// queueDelay is the delay of an expected "queue.add_after 23s", else 0.
func queueDelay(requeue string) time.Duration {
	d, _ := time.ParseDuration(strings.TrimPrefix(requeue, "queue.add_after "))
	return d
}

// firstDecision returns the end of the first reconcile of key and what the
// controller then did with the queue, up to the matching queue.done.
func firstDecision(t *testing.T, obs *cluster.Observer, key string) (observe.Event, string) {
	t.Helper()
	var end observe.Event
	requeue := ""
	decide := func(events []observe.Event) bool {
		seenEnd := false
		for _, e := range cluster.ForKey(events, key) {
			switch {
			case e.Kind == observe.KindReconcileEnd && !seenEnd:
				seenEnd, end = true, e
			case !seenEnd:
			case e.Kind == observe.KindQueueAddAfter:
				requeue = fmt.Sprintf("%s %s", e.Kind, e.Delay)
				return true
			case e.Kind == observe.KindQueueAddRateLimited:
				requeue = string(e.Kind)
				return true
			case e.Kind == observe.KindQueueDone:
				requeue = "no requeue"
				return true
			}
		}
		return false
	}
	obs.WaitFor(t, "a reconcile of "+key, decide, func(events []observe.Event) string {
		return cluster.Describe(cluster.ForKey(events, key))
	})
	return end, requeue
}

// checkConditions expects the HelloWorld's persisted conditions.
func checkConditions(t *testing.T, c client.Client, key types.NamespacedName, want []cond) {
	t.Helper()
	var g learnv1alpha1.HelloWorld
	if err := c.Get(context.Background(), key, &g); err != nil {
		t.Fatalf("get HelloWorld: %v", err)
	}
	for _, w := range want {
		got := meta.FindStatusCondition(g.Status.Conditions, w.typ)
		switch {
		case got == nil:
			checkkit.Expect(t, "a persisted %s condition %s/%s (Status().Update)", "no such condition in the stored status",
				w.typ, w.status, w.reason)
		case string(got.Status) != w.status || got.Reason != w.reason:
			checkkit.Expect(t, "condition %s %s/%s", fmt.Sprintf("%s/%s", got.Status, got.Reason),
				w.typ, w.status, w.reason)
		case got.ObservedGeneration != g.Generation:
			checkkit.Expect(t, "the %s condition's observedGeneration to be %d", fmt.Sprintf("%d", got.ObservedGeneration), w.typ, g.Generation)
		}
	}
}
