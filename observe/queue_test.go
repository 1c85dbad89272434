package observe

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func request(ns, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}

func newTestQueue(t *testing.T, em Emitter) priorityqueue.PriorityQueue[reconcile.Request] {
	t.Helper()
	q := NewQueue(em)("unit", nil)
	t.Cleanup(q.ShutDown)
	pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request])
	if !ok {
		t.Fatalf("NewQueue built a %T, which is not a priorityqueue.PriorityQueue: the controller would wrap it and lose priorities", q)
	}
	return pq
}

// summary is the part of a queue event the tests compare.
type summary struct {
	Kind     Kind
	Key      string
	Delay    time.Duration
	Failures int
	Priority any // nil, or the int
	Cause    uint64
}

func summarize(events []Event, keep func(Event) bool) []summary {
	var out []summary
	for _, e := range events {
		if keep != nil && !keep(e) {
			continue
		}
		s := summary{Kind: e.Kind, Key: e.Key, Delay: e.Delay.D(), Failures: e.Failures, Cause: e.Cause}
		if e.Priority != nil {
			s.Priority = *e.Priority
		}
		out = append(out, s)
	}
	return out
}

// assertSequence compares recorded items one by one, naming what they are.
func assertSequence[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d %s, want %d:\n got %+v\nwant %+v", len(got), what, len(want), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s %d:\n got %+v\nwant %+v", what, i, got[i], want[i])
		}
	}
}

func TestQueueEmitsEveryCall(t *testing.T) {
	b := NewBus()
	r := NewRecorder(b)
	q := newTestQueue(t, b)
	a, bb, c := request("ns", "a"), request("ns", "b"), request("", "cluster-wide")

	q.AddWithOpts(priorityqueue.AddOpts{Priority: new(10)}, a)
	q.Add(bb)
	item, priority, shutdown := q.GetWithPriority()
	if shutdown || item != a || priority != 10 {
		t.Fatalf("GetWithPriority = %v, %d, %v; want ns/a with priority 10 first", item, priority, shutdown)
	}
	// While ns/a is being processed: two failures back off 5ms then 10ms.
	q.AddRateLimited(a)
	q.AddRateLimited(a)
	q.Done(a)
	q.Forget(a)
	if n := q.NumRequeues(a); n != 0 {
		t.Errorf("NumRequeues after Forget = %d, want 0 (Forget must reach the rate limiter)", n)
	}
	q.AddAfter(c, 20*time.Millisecond)
	for range 3 { // ns/b now, ns/a after 5ms, cluster-wide after 20ms
		item, _ := q.Get()
		q.Done(item)
	}

	assertSequence(t, "events", summarize(r.Events(), nil), []summary{
		{Kind: KindQueueAdd, Key: "ns/a", Priority: 10},
		{Kind: KindQueueAdd, Key: "ns/b"},
		{Kind: KindQueueGet, Key: "ns/a", Priority: 10},
		{Kind: KindQueueAddRateLimited, Key: "ns/a", Delay: 5 * time.Millisecond, Failures: 1},
		{Kind: KindQueueAddRateLimited, Key: "ns/a", Delay: 10 * time.Millisecond, Failures: 2},
		{Kind: KindQueueDone, Key: "ns/a"},
		{Kind: KindQueueForget, Key: "ns/a"},
		{Kind: KindQueueAddAfter, Key: "cluster-wide", Delay: 20 * time.Millisecond},
		{Kind: KindQueueGet, Key: "ns/b", Priority: 0},
		{Kind: KindQueueDone, Key: "ns/b"},
		{Kind: KindQueueGet, Key: "ns/a", Priority: 0},
		{Kind: KindQueueDone, Key: "ns/a"},
		{Kind: KindQueueGet, Key: "cluster-wide", Priority: 0},
		{Kind: KindQueueDone, Key: "cluster-wide"},
	})
	for _, e := range r.Events() {
		if e.Controller != "unit" {
			t.Fatalf("event without the controller name: %+v", e)
		}
	}
}

func TestQueueReportsNothingAfterShutdown(t *testing.T) {
	b := NewBus()
	r := NewRecorder(b)
	q := newTestQueue(t, b)
	q.ShutDown()
	q.Add(request("ns", "a"))
	q.AddRateLimited(request("ns", "a"))
	if _, _, shutdown := q.GetWithPriority(); !shutdown {
		t.Fatal("GetWithPriority on a shut-down queue did not report shutdown")
	}
	if n := len(r.Events()); n != 0 {
		t.Errorf("got %d events from a shut-down queue: %+v", n, r.Events())
	}
}

func configMap(ns, name, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv, Generation: 2}}
}

func TestHandlerLinksAddsToWatchEvents(t *testing.T) {
	b := NewBus()
	r := NewRecorder(b)
	q := newTestQueue(t, b)
	ctx := context.Background()
	h := Handler(b, "unit", "ConfigMap", &handler.EnqueueRequestForObject{})

	h.Create(ctx, event.CreateEvent{Object: configMap("ns", "a", "5"), IsInInitialList: true}, q)
	h.Update(ctx, event.UpdateEvent{ObjectOld: configMap("ns", "a", "5"), ObjectNew: configMap("ns", "a", "6")}, q)
	h.Delete(ctx, event.DeleteEvent{Object: configMap("ns", "a", "6")}, q)

	events := r.Events()
	assertSequence(t, "events", summarize(events, nil), []summary{
		{Kind: KindWatch, Key: "ns/a"},
		{Kind: KindQueueAdd, Key: "ns/a", Priority: handler.LowPriority, Cause: 1},
		{Kind: KindWatch, Key: "ns/a"},
		{Kind: KindQueueAdd, Key: "ns/a", Cause: 3},
		{Kind: KindWatch, Key: "ns/a"},
		{Kind: KindQueueAdd, Key: "ns/a", Cause: 5},
	})
	for i, want := range []struct{ typ, rv string }{{WatchAdded, "5"}, {WatchModified, "6"}, {WatchDeleted, "6"}} {
		e := events[2*i]
		if e.Type != want.typ || e.ResourceVersion != want.rv || e.Object != "ConfigMap" || e.Generation != 2 || e.Controller != "unit" {
			t.Errorf("watch event %d = %+v, want type %s, resourceVersion %s, object ConfigMap, generation 2", i, e, want.typ, want.rv)
		}
	}
}

// A typed handler built with WithLowPriorityWhenUnchanged type-asserts the
// queue it is given; the cause-linking queue must pass that assertion.
func TestHandlerKeepsPriorityQueueForTypedFuncs(t *testing.T) {
	b := NewBus()
	r := NewRecorder(b)
	q := newTestQueue(t, b)
	inner := handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.Object.GetNamespace(), Name: e.Object.GetName()}})
		},
	}
	h := Handler(b, "unit", "", handler.WithLowPriorityWhenUnchanged[client.Object, reconcile.Request](inner))
	h.Create(context.Background(), event.CreateEvent{Object: configMap("ns", "b", "9"), IsInInitialList: true}, q)

	assertSequence(t, "events", summarize(r.Events(), nil), []summary{
		{Kind: KindWatch, Key: "ns/b"},
		{Kind: KindQueueAdd, Key: "ns/b", Priority: handler.LowPriority, Cause: 1},
	})
	if kind := r.Events()[0].Object; kind != "ConfigMap" {
		t.Errorf("object kind worked out as %q, want ConfigMap", kind)
	}
}

// plainEmitter hides the bus's EmitSeq.
type plainEmitter struct{ Emitter }

func TestHandlerWithoutLinks(t *testing.T) {
	b := NewBus()
	r := NewRecorder(b)
	q := newTestQueue(t, b)
	h := Handler(plainEmitter{b}, "unit", "ConfigMap", &handler.EnqueueRequestForObject{})
	h.Create(context.Background(), event.CreateEvent{Object: configMap("ns", "c", "1")}, q)
	assertSequence(t, "events", summarize(r.Events(), nil), []summary{
		{Kind: KindWatch, Key: "ns/c"},
		{Kind: KindQueueAdd, Key: "ns/c"},
	})
}
