package observe

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// drain reads a subscription until it closes; with encode it writes each
// event as a JSON line, as `lab run --format json` would.
func drain(s *Subscription, encode bool) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		enc := NewEncoder(io.Discard)
		for e := range s.C {
			if encode {
				_ = enc.Encode(e)
			}
		}
	}()
	return done
}

// BenchmarkEmit is the cost of one Emit as seen by the emitting goroutine
// (a reconcile), with 0, 1 and 4 subscribers that keep reading. Emitting in
// a tight loop outruns any reader, so most events are dropped here: that is
// the bus protecting the emitter, and dropped/event shows how often.
func BenchmarkEmit(b *testing.B) {
	for _, subscribers := range []int{0, 1, 4} {
		b.Run(fmt.Sprintf("subscribers=%d", subscribers), func(b *testing.B) {
			bus := NewBus()
			var readers []<-chan struct{}
			var subs []*Subscription
			for range subscribers {
				s := bus.Subscribe(DefaultBuffer)
				subs = append(subs, s)
				readers = append(readers, drain(s, false))
			}
			e := Event{Kind: KindQueueAdd, Controller: "database", Key: "team-a/orders"}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				bus.Emit(e)
			}
			b.StopTimer()
			var dropped uint64
			for _, s := range subs {
				dropped += s.Dropped()
			}
			bus.Close()
			for _, r := range readers {
				<-r
			}
			if subscribers > 0 {
				b.ReportMetric(float64(dropped)/float64(b.N*subscribers), "dropped/event")
			}
		})
	}
}

// BenchmarkEncode is the cost of writing one typical event as a JSON line.
func BenchmarkEncode(b *testing.B) {
	enc := NewEncoder(io.Discard)
	e := Event{
		V: SchemaVersion, Seq: 123456, Time: time.Now().UTC(), Kind: KindReconcileEnd,
		Controller: "database", Key: "team-a/orders", ReconcileID: "6c1f3a52-8d0e-4c57-9a51-0f1d7e9b2c44",
		Result: ResultRequeueAfter, RequeueAfter: Duration(5 * time.Second), DurationMs: 1.25,
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := enc.Encode(e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReconcileThroughput runs b.N reconciles of distinct keys through a
// real controller-runtime controller (queue, workers, reconcileHandler) in
// process, with a reconciler that does nothing, so it measures the
// controller machinery and what observation adds to it:
//
//	observe=off   controller-runtime's own priority queue, reconciler unwrapped
//	observe=bus   NewQueue + Reconciler wrappers emitting to a bus nobody reads
//	observe=on    as bus, with one subscriber reading events
//	observe=json  as on, and the subscriber encodes every event as a JSON line
//
// No real reconcile is this cheap, so the on/off ratio here is the worst
// case; BenchmarkReconcileThroughputAPI gives each reconcile one API call.
func BenchmarkReconcileThroughput(b *testing.B) {
	noop := func(context.Context, client.Reader, reconcile.Request) error { return nil }
	for _, workers := range []int{1, 4} {
		for _, mode := range []string{"off", "bus", "on", "json"} {
			b.Run(fmt.Sprintf("workers=%d/observe=%s", workers, mode), func(b *testing.B) {
				benchmarkReconciles(b, workers, mode, nil, noop)
			})
		}
	}
}

// BenchmarkReconcileThroughputAPI is BenchmarkReconcileThroughput with one
// API server read per reconcile (a Get through the manager's API reader of
// an object that does not exist, against the envtest control plane), the
// least a real reconcile does. With observation on the reader is wrapped
// too, adding a client event.
func BenchmarkReconcileThroughputAPI(b *testing.B) {
	cfg := controlPlane(b)
	apiReader, err := client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	get := func(ctx context.Context, r client.Reader, req reconcile.Request) error {
		return client.IgnoreNotFound(r.Get(ctx, req.NamespacedName, &corev1.ConfigMap{}))
	}
	for _, workers := range []int{1, 4} {
		for _, mode := range []string{"off", "bus", "on", "json"} {
			b.Run(fmt.Sprintf("workers=%d/observe=%s", workers, mode), func(b *testing.B) {
				benchmarkReconciles(b, workers, mode, apiReader, get)
			})
		}
	}
}

func benchmarkReconciles(b *testing.B, workers int, mode string, reader client.Reader,
	work func(context.Context, client.Reader, reconcile.Request) error) {
	n := b.N
	opts := controller.Options{MaxConcurrentReconciles: workers, SkipNameValidation: ptr.To(true)}
	var bus *Bus
	var sub *Subscription
	var subscriberDone <-chan struct{}
	if mode != "off" {
		bus = NewBus()
		if mode != "bus" {
			sub = bus.Subscribe(DefaultBuffer)
			subscriberDone = drain(sub, mode == "json")
		}
		opts.NewQueue = NewQueue(bus)
		if reader != nil {
			reader = Reader(bus, reader)
		}
	}
	var reconciled atomic.Int64
	allDone := make(chan struct{})
	failed := make(chan error, 1)
	var r reconcile.Reconciler = reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		if err := work(ctx, reader, req); err != nil {
			select {
			case failed <- err:
			default:
			}
			return reconcile.Result{}, reconcile.TerminalError(err)
		}
		if reconciled.Add(1) == int64(n) {
			close(allDone)
		}
		return reconcile.Result{}, nil
	})
	if bus != nil {
		r = Reconciler(bus, "bench", nil, r)
	}
	opts.Reconciler = r
	c, err := controller.NewUnmanaged("bench", opts)
	if err != nil {
		b.Fatal(err)
	}
	// A source that enqueues every request at start, as an initial list would.
	err = c.Watch(source.Func(func(_ context.Context, q queue) error {
		for i := range n {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "bench-" + strconv.Itoa(i)}})
		}
		return nil
	}))
	if err != nil {
		b.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	b.ResetTimer()
	cpuBefore := processCPU(b)
	go func() { stopped <- c.Start(ctx) }()
	select {
	case <-allDone:
	case err := <-failed:
		cancel()
		b.Fatalf("reconcile failed: %v", err)
	case err := <-stopped:
		b.Fatalf("controller stopped before %d reconciles: %v", n, err)
	}
	b.StopTimer()
	cpu := processCPU(b) - cpuBefore
	cancel()
	if err := <-stopped; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "reconciles/s")
	// CPU time is less disturbed than wall time by other load on the machine.
	b.ReportMetric(float64(cpu.Microseconds())/float64(n), "cpu-µs/reconcile")
	if sub != nil {
		b.ReportMetric(float64(sub.Dropped())/float64(bus.LastSeq()), "dropped/event")
		bus.Close()
		<-subscriberDone
	}
}

// processCPU is the user+system CPU time this process has used.
func processCPU(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
