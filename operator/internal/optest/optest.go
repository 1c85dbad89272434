package optest

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator"
	"github.com/operator-lab/lab/operator/crds"
	"github.com/operator-lab/lab/operator/scheme"
	"github.com/operator-lab/lab/operator/switches"
)

var (
	config  *rest.Config
	counter atomic.Int64
)

// Main starts a private control plane with the operator's CRDs, runs the
// tests, stops it and returns the exit code: call it from TestMain.
func Main(m *testing.M) int {
	ctrl.SetLogger(logr.Discard())
	all, err := crds.All()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cp, err := controlplane.Start(context.Background(), controlplane.Options{CRDs: all, SetupLog: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start the control plane:", err)
		return 1
	}
	config = cp.Config
	code := m.Run()
	if err := cp.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop the control plane:", err)
	}
	return code
}

// Config is the control plane's REST config (after Main started it).
func Config() *rest.Config { return config }

// Env is one test's running operator.
type Env struct {
	Namespace string
	Bus       *observe.Bus
	Recorder  *observe.Recorder
	Switches  *switches.Switches
	Operator  *operator.Operator
	Manager   ctrl.Manager
	// Client talks to the API server directly: no cache, no events.
	Client client.Client
}

// Options for Start.
type Options struct {
	Lab string
	// Set is applied to the switches before the operator starts ("k=v,...").
	Set string
	// Gate, if set, is handed to the operator.
	Gate *observe.Gate
}

// Start creates a namespace, starts the operator for opts.Lab in it and
// stops everything when the test ends.
func Start(t testing.TB, opts Options) *Env {
	t.Helper()
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	direct, err := client.New(config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	ns := fmt.Sprintf("t%d-%d", time.Now().UnixNano()%1e6, counter.Add(1))
	ctx := context.Background()
	if err := direct.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}

	bus := observe.NewBus()
	rec := observe.NewRecorder(bus)
	sw := switches.NewForLab(opts.Lab, bus)
	if err := sw.Apply(opts.Set); err != nil {
		t.Fatal(err)
	}
	mgr, err := operator.NewManager(config, operator.ManagerOptions{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	op, err := operator.New(mgr, operator.Options{Lab: opts.Lab, Emitter: bus, Switches: sw, Gate: opts.Gate, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(runCtx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
		rec.Close()
		_ = direct.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	})
	return &Env{Namespace: ns, Bus: bus, Recorder: rec, Switches: sw, Operator: op, Manager: mgr, Client: direct}
}

// WaitFor waits (up to timeout) until done holds for the recorded events,
// failing the test with the events seen so far otherwise.
func (e *Env) WaitFor(t testing.TB, timeout time.Duration, what string, done func([]observe.Event) bool) []observe.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := e.Recorder.WaitFor(ctx, done); err != nil {
		t.Fatalf("waiting for %s: %v\n%s", what, err, Dump(e.Recorder.Events()))
	}
	return e.Recorder.Events()
}

// Dump renders events one per line for failure messages, as the text
// stream writes them, led by their sequence numbers (which causes refer to)
// and timed from the first event.
func Dump(events []observe.Event) string {
	if len(events) == 0 {
		return "(no events)\n"
	}
	return observe.Lines(events, observe.LineOptions{Seq: true, Start: events[0].Time})
}

// Of returns the events of one kind.
func Of(events []observe.Event, kind observe.Kind) []observe.Event {
	var out []observe.Event
	for _, e := range events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// WaitForCache waits until the manager's cache holds each object at the
// resourceVersion the API server has now. A reconcile called directly reads
// through that cache; right after an event it can still hold an older copy.
func (e *Env) WaitForCache(t testing.TB, timeout time.Duration, objs ...client.Object) {
	t.Helper()
	ctx := context.Background()
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		for _, obj := range objs {
			key := client.ObjectKeyFromObject(obj)
			fresh, cached := obj.DeepCopyObject().(client.Object), obj.DeepCopyObject().(client.Object)
			if err := e.Client.Get(ctx, key, fresh); err != nil {
				return false, fmt.Errorf("get %s: %w", key, err)
			}
			if err := e.Manager.GetCache().Get(ctx, key, cached); err != nil || cached.GetResourceVersion() != fresh.GetResourceVersion() {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("waiting for the manager's cache to catch up: %v", err)
	}
}

// StatusConflict reports whether the reconcile that ended with end failed
// on a status write the API server refused with a Conflict. The 3.1
// controller returns that error, as the lesson says (the retry works from
// fresh data), and it is normal whenever the cache lags a write — the
// controller's own, say — so a test that wants no failures allows it.
func StatusConflict(events []observe.Event, end observe.Event) bool {
	if end.Kind != observe.KindReconcileEnd || end.Result != observe.ResultError {
		return false
	}
	for _, e := range events {
		if c := e.ClientCall(); e.ReconcileID == end.ReconcileID && c.Verb == "status.update" && c.Outcome == observe.OutcomeConflict {
			return true
		}
	}
	return false
}
