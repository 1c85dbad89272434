package resultcheck_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/operator-lab/lab/content"
	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/observe"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	var err error
	cp, err = controlplane.Start(ctx, controlplane.Options{SetupLog: os.Stderr})
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "start the control plane: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := cp.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stop the control plane: %v\n", err)
	}
	os.Exit(code)
}

// How each row's reconciler behaves: it returns the row's values for the
// first failingAttempts calls for its object, then succeeds, so the
// rate-limited rows show several growing delays and then a Forget.
const (
	failingAttempts = 3
	requeueAfter    = 50 * time.Millisecond
)

var errTransient = errors.New("transient failure for the lesson table")

// resultFor returns what the table row's `return` line returns.
func resultFor(c content.ResultCase) (reconcile.Result, error) {
	switch c.Return {
	case "ctrl.Result{}, nil":
		return reconcile.Result{}, nil
	case "ctrl.Result{RequeueAfter: d}, nil":
		return reconcile.Result{RequeueAfter: requeueAfter}, nil
	case "ctrl.Result{Requeue: true}, nil":
		return reconcile.Result{Requeue: true}, nil //nolint:staticcheck // the deprecated row is what is being checked
	case "ctrl.Result{}, err":
		return reconcile.Result{}, errTransient
	case "ctrl.Result{RequeueAfter: d}, err":
		return reconcile.Result{RequeueAfter: requeueAfter}, errTransient
	case "ctrl.Result{}, reconcile.TerminalError(err)":
		return reconcile.Result{}, reconcile.TerminalError(errTransient)
	}
	panic(fmt.Sprintf("the table has a row this test does not know: %q; teach resultFor about it", c.Return))
}

// tableReconciler reconciles ConfigMaps named after ResultCases rows and
// returns each row's result.
type tableReconciler struct {
	mu       sync.Mutex
	attempts map[string]int
}

func (r *tableReconciler) Reconcile(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.mu.Lock()
	r.attempts[req.Name]++
	n := r.attempts[req.Name]
	r.mu.Unlock()
	for _, c := range content.ResultCases {
		if c.ID == req.Name && n <= failingAttempts {
			return resultFor(c)
		}
	}
	return reconcile.Result{}, nil
}

// requeues reports whether a row's result brings the key back by itself.
func requeues(c content.ResultCase) bool { return c.Retry != content.RetryOnEvent }

// expectedWindows is how many times each row's object is reconciled: once
// if nothing requeues it, else failingAttempts times plus the final success.
func expectedWindows(c content.ResultCase) int {
	if requeues(c) {
		return failingAttempts + 1
	}
	return 1
}

// TestResultTableMatchesTheController runs every row of the lesson's table
// through a real controller and compares what the work queue was told to do.
func TestResultTableMatchesTheController(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	direct, err := client.New(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "resultcheck-"}}
	if err := direct.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = direct.Delete(context.Background(), ns) })

	bus := observe.NewBus()
	recorder := observe.NewRecorder(bus)
	defer recorder.Close()
	var logs labtest.SyncBuffer
	mgr, err := ctrl.NewManager(cp.Config, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		Logger:  zap.New(zap.WriteTo(&logs), zap.UseDevMode(false)),
		Cache:   cache.Options{DefaultNamespaces: map[string]cache.Config{ns.Name: {}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	controllerName := ns.Name // unique, and a valid controller name
	r := &tableReconciler{attempts: map[string]int{}}
	err = ctrl.NewControllerManagedBy(mgr).
		Named(controllerName).
		For(&corev1.ConfigMap{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetNamespace() == ns.Name
		}))).
		WithOptions(controller.Options{
			NewQueue:           observe.NewQueue(bus),
			SkipNameValidation: ptr.To(true),
		}).
		Complete(observe.Reconciler(bus, controllerName, nil, r))
	if err != nil {
		t.Fatal(err)
	}
	mgrCtx, stopMgr := context.WithCancel(ctx)
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(mgrCtx) }()
	defer func() {
		stopMgr()
		if err := <-mgrDone; err != nil {
			t.Errorf("manager: %v", err)
		}
	}()

	for _, c := range content.ResultCases {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: c.ID, Namespace: ns.Name}}
		if err := direct.Create(ctx, cm); err != nil {
			t.Fatalf("create ConfigMap %s: %v", c.ID, err)
		}
	}

	key := func(c content.ResultCase) string { return ns.Name + "/" + c.ID }
	err = recorder.WaitFor(ctx, func(events []observe.Event) bool {
		for _, c := range content.ResultCases {
			if len(windows(events, controllerName, key(c))) < expectedWindows(c) {
				return false
			}
		}
		return true
	})
	if err != nil {
		for _, c := range content.ResultCases {
			t.Logf("%s: %d reconciles seen, %d expected", c.ID, len(windows(recorder.Events(), controllerName, key(c))), expectedWindows(c))
		}
		t.Fatalf("waiting for every row's reconciles: %v", err)
	}

	events := recorder.Events()
	for _, c := range content.ResultCases {
		t.Run(c.ID, func(t *testing.T) {
			ws := windows(events, controllerName, key(c))
			failing := ws[:expectedWindows(c)-1]
			if !requeues(c) {
				failing = ws[:1]
			}
			for i, w := range failing {
				if got := queueCalls(w); !equalCalls(got, c.Calls) {
					t.Errorf("reconcile %d returned `%s`: the table says %v, the controller called %v", i+1, c.Return, c.Calls, got)
				}
				checkDelay(t, c, i, w)
			}
			if requeues(c) {
				final := ws[expectedWindows(c)-1]
				want := []content.QueueCall{content.CallForget, content.CallDone}
				if got := queueCalls(final); !equalCalls(got, want) {
					t.Errorf("the final successful reconcile: want %v, the controller called %v", want, got)
				}
			}
			warnings := countLines(logs.String(), "Warning: Reconciler returned both", `"name":"`+c.ID+`"`)
			switch {
			case c.IgnoresRequeueAfter && warnings != failingAttempts:
				t.Errorf("the table says a warning is logged each time; %d warnings for %d reconciles", warnings, failingAttempts)
			case !c.IgnoresRequeueAfter && warnings != 0:
				t.Errorf("the table says nothing about a warning, but %d were logged", warnings)
			}
		})
	}

	terminal, err := counterValue("controller_runtime_terminal_reconcile_errors_total", controllerName)
	if err != nil {
		t.Fatal(err)
	}
	wantTerminal := 0
	for _, c := range content.ResultCases {
		if c.Terminal {
			wantTerminal++
		}
	}
	if int(terminal) != wantTerminal {
		t.Errorf("terminal errors counted: %v, the table marks %d row(s) as counted terminal errors", terminal, wantTerminal)
	}
}

// windows splits one key's queue events into reconciles: each runs from a
// queue.get to the queue.done that ends it.
func windows(events []observe.Event, controllerName, key string) [][]observe.Event {
	var (
		all     [][]observe.Event
		current []observe.Event
		open    bool
	)
	for _, e := range events {
		if e.Controller != controllerName || e.Key != key || !strings.HasPrefix(string(e.Kind), "queue.") {
			continue
		}
		switch {
		case e.Kind == observe.KindQueueGet:
			open, current = true, []observe.Event{e}
		case open:
			current = append(current, e)
			if e.Kind == observe.KindQueueDone {
				all = append(all, current)
				open = false
			}
		}
	}
	return all
}

var callOf = map[observe.Kind]content.QueueCall{
	observe.KindQueueForget:         content.CallForget,
	observe.KindQueueAddAfter:       content.CallAddAfter,
	observe.KindQueueAddRateLimited: content.CallAddRateLimited,
	observe.KindQueueDone:           content.CallDone,
	observe.KindQueueAdd:            "Add",
}

// queueCalls lists the calls in a window after the worker took the key.
func queueCalls(window []observe.Event) []content.QueueCall {
	var calls []content.QueueCall
	for _, e := range window[1:] {
		call, ok := callOf[e.Kind]
		if !ok {
			call = content.QueueCall(e.Kind)
		}
		calls = append(calls, call)
	}
	return calls
}

func equalCalls(a, b []content.QueueCall) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// checkDelay holds the "reconciled again" column to the delays the queue
// was given: d for RequeueAfter, RateLimiterBase·2ⁿ for the n-th failure.
func checkDelay(t *testing.T, c content.ResultCase, attempt int, window []observe.Event) {
	t.Helper()
	for _, e := range window {
		switch {
		case e.Kind == observe.KindQueueAddAfter && c.Retry == content.RetryAfterRequested:
			if e.Delay.D() != requeueAfter {
				t.Errorf("reconcile %d: AddAfter(%s), returned RequeueAfter %s", attempt+1, e.Delay, requeueAfter)
			}
		case e.Kind == observe.KindQueueAddRateLimited && c.Retry == content.RetryRateLimited:
			want := content.RateLimiterBase << attempt
			if e.Delay.D() != want {
				t.Errorf("reconcile %d: the rate limiter chose %s, the table says %s·2^%d = %s", attempt+1, e.Delay, content.RateLimiterBase, attempt, want)
			}
		}
	}
}

func countLines(text string, substrings ...string) int {
	n := 0
	for _, line := range strings.Split(text, "\n") {
		all := true
		for _, s := range substrings {
			all = all && strings.Contains(line, s)
		}
		if all {
			n++
		}
	}
	return n
}

// counterValue reads a controller-runtime counter for one controller from
// the metrics registry.
func counterValue(name, controllerName string) (float64, error) {
	families, err := metrics.Registry.Gather()
	if err != nil {
		return 0, fmt.Errorf("gather metrics: %w", err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controllerName {
					return m.GetCounter().GetValue(), nil
				}
			}
		}
	}
	return 0, fmt.Errorf("metric %s{controller=%q} not found", name, controllerName)
}
