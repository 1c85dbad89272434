package results_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

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
	name    string
	greet   string
	setup   func(w *world, name string)
	requeue string // "queue.add_after 23s", "queue.add_rate_limited" or "no requeue"
	result  string // expected reconcile.end result, "" for any
	// conds: the conditions the stored status must hold afterwards (the
	// API's types and reasons); none checked if empty.
	conds []cond
}

// cond is one expected condition: its type, status and reason.
type cond struct{ typ, status, reason string }

func TestChoosingTheResult(t *testing.T) {
	ctx := context.Background()
	dependencyRetry := checkkit.Seconds(11, 45)
	retryAfter := checkkit.Seconds(11, 90)
	scenarios := []scenario{
		{name: "success", requeue: "no requeue", result: observe.ResultSuccess,
			conds: []cond{
				{learnv1alpha1.ConditionDependencyAvailable, "True", learnv1alpha1.ReasonAvailable},
				{learnv1alpha1.ConditionReady, "True", learnv1alpha1.ReasonReconciled},
			}},
		{name: fmt.Sprintf("dependency not ready (DependencyRetry %s)", dependencyRetry),
			setup:   func(w *world, n string) { w.notReady[n] = true },
			requeue: "queue.add_after " + dependencyRetry.String(),
			conds: []cond{
				{learnv1alpha1.ConditionDependencyAvailable, "False", learnv1alpha1.ReasonUnavailable},
				{learnv1alpha1.ConditionReady, "False", learnv1alpha1.ReasonUnavailable},
			}},
		{name: "dependency check fails",
			setup: func(w *world, n string) {
				w.depErr[n] = errors.New(checkkit.Pick("dial tcp: i/o timeout", "connection refused"))
			},
			requeue: "queue.add_rate_limited"},
		{name: "transient send error",
			setup: func(w *world, n string) {
				w.sendErr[n] = errors.New(checkkit.Pick("connection reset by peer", "503 service unavailable"))
			},
			requeue: "queue.add_rate_limited", result: observe.ResultError},
		{name: "message rejected (permanent error)",
			setup: func(w *world, n string) {
				w.sendErr[n] = fmt.Errorf("hello %s: %w", n, results.ErrRejected)
			},
			requeue: "no requeue", result: observe.ResultTerminal,
			conds: []cond{
				{learnv1alpha1.ConditionFailed, "True", learnv1alpha1.ReasonInvalidSpec},
				{learnv1alpha1.ConditionReady, "False", learnv1alpha1.ReasonInvalidSpec},
			}},
		{name: fmt.Sprintf("rate limited (retry after %s)", retryAfter),
			setup:   func(w *world, n string) { w.sendErr[n] = &results.RateLimitedError{RetryAfter: retryAfter} },
			requeue: "queue.add_after " + retryAfter.String(), result: observe.ResultRequeueAfter},
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
		r := &results.Reconciler{
			Client:          observe.Client(obs.Bus, mgr.GetClient()),
			Dependency:      w,
			Sender:          w,
			DependencyRetry: dependencyRetry,
		}
		return ctrl.NewControllerManagedBy(mgr).
			Named("helloworld").
			For(&learnv1alpha1.HelloWorld{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
			WithOptions(obs.QueueOptions()).
			Complete(observe.Reconciler(obs.Bus, "helloworld", nil, r))
	})

	for i := range scenarios {
		s := &scenarios[i]
		s.greet = checkkit.Name(checkkit.Pick("greet", "hello", "note"))
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
			if s.result != "" && end.Result != s.result {
				checkkit.Expect(t, "Reconcile to return %s", end.Brief()+" ("+requeue+")", s.result)
			}
			if requeue != s.requeue {
				checkkit.Expect(t, "%s", requeue+" ("+end.Brief()+")", s.requeue)
			}
			if len(s.conds) > 0 {
				checkConditions(t, c, types.NamespacedName{Namespace: ns, Name: s.greet}, s.conds)
			}
		})
	}
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
