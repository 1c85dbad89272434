package observe

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// testNamespace creates a namespace of its own for one test.
func testNamespace(t *testing.T, c client.Client) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "observe-"}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), ns) })
	return ns.Name
}

func directClient(t *testing.T) client.Client {
	t.Helper()
	c, err := client.New(controlPlane(t), client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return c
}

// startManager runs a manager that only caches namespace ns, after setup has
// added controllers to it, until the test ends.
func startManager(t *testing.T, ns string, setup func(manager.Manager) error) {
	t.Helper()
	mgr, err := ctrl.NewManager(controlPlane(t), ctrl.Options{
		Scheme:     clientgoscheme.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatalf("manager: %v", err)
	}
	if err := setup(mgr); err != nil {
		t.Fatalf("set up controllers: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}

// outcomeReconciler returns, for its first `times` reconciles of a
// ConfigMap, the outcome named in the ConfigMap's data, then succeeds.
type outcomeReconciler struct {
	client    client.Client
	apiReader client.Reader

	mu       sync.Mutex
	attempts map[types.NamespacedName]int
}

const (
	outcomeSuccess      = ""
	outcomeError        = "error"
	outcomeRequeue      = "requeue"
	outcomeAfter        = "after"
	outcomeTerminal     = "terminal"
	outcomeErrorAndWait = "error+after"
	requeueDelay        = 50 * time.Millisecond
)

func (r *outcomeReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var cm corev1.ConfigMap
	if err := r.client.Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	r.mu.Lock()
	r.attempts[req.NamespacedName]++
	attempt := r.attempts[req.NamespacedName]
	r.mu.Unlock()

	outcome := cm.Data["outcome"]
	if outcome == outcomeSuccess {
		// Read once more past the cache, to see the API reader reported.
		var fresh corev1.ConfigMap
		return reconcile.Result{}, r.apiReader.Get(ctx, req.NamespacedName, &fresh)
	}
	if times, _ := strconv.Atoi(cm.Data["times"]); attempt > times {
		return reconcile.Result{}, nil
	}
	planned := errors.New("planned failure")
	switch outcome {
	case outcomeError:
		return reconcile.Result{}, planned
	case outcomeRequeue:
		return reconcile.Result{Requeue: true}, nil //nolint:staticcheck // the deprecated Requeue, as a learner may still write it
	case outcomeAfter:
		return reconcile.Result{RequeueAfter: requeueDelay}, nil
	case outcomeTerminal:
		return reconcile.Result{}, reconcile.TerminalError(planned)
	case outcomeErrorAndWait:
		return reconcile.Result{RequeueAfter: time.Hour}, planned
	}
	return reconcile.Result{}, reconcile.TerminalError(errors.New("unknown outcome " + outcome))
}

// step is the part of a queue, reconcile or watch event that the outcome test
// compares.
type step struct {
	Kind         Kind
	Delay        time.Duration
	Failures     int
	Priority     any // nil or int
	Result       string
	RequeueAfter time.Duration
}

func steps(events []Event) []step {
	out := make([]step, 0, len(events))
	for _, e := range events {
		s := step{Kind: e.Kind, Delay: e.Delay.D(), Failures: e.Failures, Result: e.Result, RequeueAfter: e.RequeueAfter.D()}
		if e.Priority != nil {
			s.Priority = *e.Priority
		}
		out = append(out, s)
	}
	return out
}

// Shorthands for the expected sequences. The controller re-adds with the
// priority the item was taken with (0 here); the watch handler's add of a new
// object has none.
var (
	stepWatch   = step{Kind: KindWatch}
	stepAdd     = step{Kind: KindQueueAdd}
	stepGet     = step{Kind: KindQueueGet, Priority: 0}
	stepStart   = step{Kind: KindReconcileStart}
	stepForget  = step{Kind: KindQueueForget}
	stepDone    = step{Kind: KindQueueDone}
	stepSuccess = step{Kind: KindReconcileEnd, Result: ResultSuccess}
)

func stepRateLimited(delay time.Duration, failures int) step {
	return step{Kind: KindQueueAddRateLimited, Delay: delay, Failures: failures, Priority: 0}
}

// The queue calls the controller makes for each reconcile outcome, observed on
// a real controller against a real API server, must be exactly DESIGN.md's
// table: error → AddRateLimited; Requeue → AddRateLimited; RequeueAfter →
// Forget + AddAfter; TerminalError → nothing; success → Forget; Done always.
func TestControllerQueueCallsPerOutcome(t *testing.T) {
	c := directClient(t)
	ns := testNamespace(t, c)
	bus := NewBus()
	rec := NewRecorder(bus)
	const name = "observe-outcomes"
	// Objects that exist when the controller starts come in its initial list
	// with low priority; wait for this one to be reconciled, so that the
	// ConfigMaps below arrive as ordinary watch events.
	sentinel := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sentinel"}}
	if err := c.Create(context.Background(), sentinel); err != nil {
		t.Fatal(err)
	}

	startManager(t, ns, func(mgr manager.Manager) error {
		r := &outcomeReconciler{
			client:    Client(bus, mgr.GetClient()),
			apiReader: Reader(bus, mgr.GetAPIReader()),
			attempts:  map[types.NamespacedName]int{},
		}
		return ctrl.NewControllerManagedBy(mgr).
			Named(name).
			WithOptions(controller.Options{NewQueue: NewQueue(bus)}).
			Watches(&corev1.ConfigMap{}, Handler(bus, name, "ConfigMap", &handler.EnqueueRequestForObject{})).
			Complete(Reconciler(bus, name, nil, r))
	})

	ready, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := rec.WaitFor(ready, func(events []Event) bool {
		for _, e := range events {
			if e.Kind == KindQueueDone && e.Key == ns+"/sentinel" {
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("controller never reconciled the ConfigMap that existed before it started: %v", err)
	}

	for _, tc := range []struct {
		outcome string
		times   int
		want    []step
	}{
		{outcomeSuccess, 0, []step{stepWatch, stepAdd, stepGet, stepStart, stepSuccess, stepForget, stepDone}},
		{outcomeError, 2, []step{stepWatch, stepAdd,
			stepGet, stepStart, {Kind: KindReconcileEnd, Result: ResultError}, stepRateLimited(5*time.Millisecond, 1), stepDone,
			stepGet, stepStart, {Kind: KindReconcileEnd, Result: ResultError}, stepRateLimited(10*time.Millisecond, 2), stepDone,
			stepGet, stepStart, stepSuccess, stepForget, stepDone}},
		{outcomeRequeue, 1, []step{stepWatch, stepAdd,
			stepGet, stepStart, {Kind: KindReconcileEnd, Result: ResultRequeue}, stepRateLimited(5*time.Millisecond, 1), stepDone,
			stepGet, stepStart, stepSuccess, stepForget, stepDone}},
		{outcomeAfter, 1, []step{stepWatch, stepAdd,
			stepGet, stepStart, {Kind: KindReconcileEnd, Result: ResultRequeueAfter, RequeueAfter: requeueDelay},
			stepForget, {Kind: KindQueueAddAfter, Delay: requeueDelay, Priority: 0}, stepDone,
			stepGet, stepStart, stepSuccess, stepForget, stepDone}},
		// Nothing between the end and Done: no requeue and no Forget. Every
		// queue call the controller makes for a reconcile precedes its Done.
		{outcomeTerminal, 1, []step{stepWatch, stepAdd,
			stepGet, stepStart, {Kind: KindReconcileEnd, Result: ResultTerminal}, stepDone}},
		// The error wins: RequeueAfter is ignored, the item is rate limited.
		{outcomeErrorAndWait, 1, []step{stepWatch, stepAdd,
			stepGet, stepStart, {Kind: KindReconcileEnd, Result: ResultError, RequeueAfter: time.Hour}, stepRateLimited(5*time.Millisecond, 1), stepDone,
			stepGet, stepStart, stepSuccess, stepForget, stepDone}},
	} {
		label := tc.outcome
		if label == outcomeSuccess {
			label = "success"
		}
		t.Run(label, func(t *testing.T) {
			cmName := "cm-" + strings.ReplaceAll(label, "+", "-")
			key := ns + "/" + cmName
			cm := &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cmName},
				Data:       map[string]string{"outcome": tc.outcome, "times": strconv.Itoa(tc.times)},
			}
			if err := c.Create(context.Background(), cm); err != nil {
				t.Fatal(err)
			}
			ofKey := func(events []Event) []Event {
				var out []Event
				for _, e := range events {
					if e.Key == key && e.Controller == name && e.Kind != KindClient {
						out = append(out, e)
					}
				}
				return out
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err := rec.WaitFor(ctx, func(events []Event) bool { return len(ofKey(events)) >= len(tc.want) })
			events := ofKey(rec.Events())
			if err != nil {
				t.Fatalf("%v; events so far: %+v", err, steps(events))
			}
			got := steps(events)
			for i := range tc.want {
				if got[i] != tc.want[i] {
					t.Fatalf("event %d = %+v, want %+v\n got %+v\nwant %+v", i, got[i], tc.want[i], got, tc.want)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("extra events after the expected ones: %+v", got[len(tc.want):])
			}

			watch, add := events[0], events[1]
			if watch.Type != WatchAdded || watch.Object != "ConfigMap" || watch.ResourceVersion != cm.ResourceVersion {
				t.Errorf("watch event = %+v, want ADDED ConfigMap at resourceVersion %s", watch, cm.ResourceVersion)
			}
			if add.Cause != watch.Seq {
				t.Errorf("queue.add cause = %d, want the watch event's seq %d", add.Cause, watch.Seq)
			}
			for _, e := range events[2:] {
				if e.Cause != 0 {
					t.Errorf("%s has cause %d; only watch-driven adds have one", e.Kind, e.Cause)
				}
			}
			assertClientReadsInsideReconciles(t, rec.Events(), key, tc.outcome == outcomeSuccess)
		})
	}
}

// Every reconcile read the ConfigMap from the cache, and its client event
// carries that reconcile's ID (controller-runtime's, not one we made up).
func assertClientReadsInsideReconciles(t *testing.T, events []Event, key string, apiRead bool) {
	t.Helper()
	starts := map[string]bool{}
	for _, e := range events {
		if e.Kind == KindReconcileStart && e.Key == key {
			starts[e.ReconcileID] = true
		}
	}
	var cacheReads, apiReads int
	for _, e := range events {
		if e.Kind != KindClient || e.Key != key {
			continue
		}
		if !starts[e.ReconcileID] {
			t.Errorf("client event outside any reconcile of %s: %+v", key, e)
		}
		if e.Verb != "get" || e.Object != "ConfigMap" || e.Outcome != OutcomeOK {
			t.Errorf("unexpected client event: %+v", e)
		}
		switch e.Source {
		case SourceCache:
			cacheReads++
		case SourceAPI:
			apiReads++
		}
	}
	if cacheReads != len(starts) {
		t.Errorf("%d cache reads for %d reconciles", cacheReads, len(starts))
	}
	if want := map[bool]int{true: 1, false: 0}[apiRead]; apiReads != want {
		t.Errorf("%d API reads, want %d", apiReads, want)
	}
}

// Objects that exist when a controller starts arrive in the initial list and
// get handler.LowPriority; the wrapped handler must keep that working (the
// queue it passes on is still a priority queue) and link the add to the watch
// event. WatchInformers reports the same objects for a controller whose
// handlers cannot be wrapped.
func TestInitialListPriorityAndInformerWatch(t *testing.T) {
	c := directClient(t)
	ns := testNamespace(t, c)
	ctx := context.Background()
	pre := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pre-existing"}}
	if err := c.Create(ctx, pre); err != nil {
		t.Fatal(err)
	}

	bus := NewBus()
	rec := NewRecorder(bus)
	const name, informerController = "observe-initial", "learner"
	startManager(t, ns, func(mgr manager.Manager) error {
		if err := WatchInformers(ctx, bus, mgr.GetCache(), informerController, &corev1.ConfigMap{}); err != nil {
			return err
		}
		return ctrl.NewControllerManagedBy(mgr).
			Named(name).
			WithOptions(controller.Options{NewQueue: NewQueue(bus)}).
			Watches(&corev1.ConfigMap{}, Handler(bus, name, "ConfigMap", &handler.EnqueueRequestForObject{})).
			Complete(Reconciler(bus, name, nil, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
				return reconcile.Result{}, nil
			})))
	})

	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	preKey := ns + "/pre-existing"
	var watch, add Event
	err := rec.WaitFor(waitCtx, func(events []Event) bool {
		for _, e := range events {
			if e.Controller == name && e.Key == preKey {
				switch e.Kind {
				case KindWatch:
					watch = e
				case KindQueueAdd:
					add = e
				}
			}
		}
		return add.Seq != 0
	})
	if err != nil {
		t.Fatal(err)
	}
	if add.Priority == nil || *add.Priority != handler.LowPriority {
		t.Errorf("initial-list add has priority %v, want %d (handler.LowPriority)", add.Priority, handler.LowPriority)
	}
	if watch.Seq == 0 || add.Cause != watch.Seq {
		t.Errorf("initial-list add cause = %d, watch seq = %d; want them linked", add.Cause, watch.Seq)
	}

	post := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "post"}}
	if err := c.Create(ctx, post); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, post); err != nil {
		t.Fatal(err)
	}
	informerEvents := func(events []Event) []string {
		var out []string
		for _, e := range events {
			if e.Controller == informerController {
				if e.Kind != KindWatch || e.Object != "ConfigMap" || e.Cause != 0 {
					t.Errorf("unexpected informer event %+v", e)
				}
				out = append(out, e.Type+" "+e.Key)
			}
		}
		return out
	}
	err = rec.WaitFor(waitCtx, func(events []Event) bool { return len(informerEvents(events)) >= 3 })
	got := informerEvents(rec.Events())
	if err != nil {
		t.Fatalf("%v; informer events so far: %q", err, got)
	}
	want := []string{WatchAdded + " " + preKey, WatchAdded + " " + ns + "/post", WatchDeleted + " " + ns + "/post"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("informer watch events = %q, want %q", got, want)
	}
}
