package ratelimit_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator-lab/lab/labs/checkkit"
	"github.com/operator-lab/lab/labs/checkkit/cluster"

	learnv1alpha1 "example.com/lab44/api/v1alpha1"
	"example.com/lab44/external"
	"example.com/lab44/ratelimit"
)

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func near(a, b time.Duration) bool {
	d := a - b
	return d > -2*time.Millisecond && d < 2*time.Millisecond
}

func TestLimiter(t *testing.T) {
	perSecond := float64(checkkit.Between(2, 10))
	interval := time.Duration(float64(time.Second) / perSecond)
	// Always a burst of 1 (the boundary) and one of several: a limiter
	// that ignores its burst passes the first and never the second.
	several := checkkit.Between(2, 4)
	for _, burst := range []int{1, several} {
		t.Run(fmt.Sprintf("a burst of %d, then one call every %s", burst, interval), func(t *testing.T) {
			sequence(t, ratelimit.New(perSecond, burst), burst, interval)
		})
	}
	t.Run(fmt.Sprintf("a burst of %d shared by many workers", several), func(t *testing.T) {
		shared(t, perSecond, several)
	})
}

// sequence asks l for burst calls at one instant, then one more, then
// that one again once its delay has passed.
func sequence(t *testing.T, l *ratelimit.Limiter, burst int, interval time.Duration) {
	t.Helper()
	for i := 1; i <= burst; i++ {
		if d := l.Delay(t0); d != 0 {
			checkkit.Expect(t, "call %d of the burst of %d to go at once", fmt.Sprintf("a delay of %s", d), i, burst)
		}
	}
	d := l.Delay(t0)
	if !near(d, interval) {
		checkkit.Expect(t, "the call after the burst to wait %s", d.String(), interval)
	}
	if again := l.Delay(t0.Add(d)); again != 0 {
		checkkit.Expect(t, "the delayed call to go when it comes back after %s",
			fmt.Sprintf("another delay of %s (was the delayed reservation cancelled?)", again), d)
	}
}

// shared has many workers ask one limiter at once, then keep asking.
func shared(t *testing.T, perSecond float64, burst int) {
	t.Helper()
	l := ratelimit.New(perSecond, burst)
	var allowed atomic.Int32
	var wg sync.WaitGroup
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if l.Delay(t0) == 0 {
				allowed.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := int(allowed.Load()); n != burst {
		checkkit.Expect(t, "%d of 40 simultaneous calls to go (the burst)", fmt.Sprintf("%d", n), burst)
	}
	// Three simulated seconds of 8 workers asking every 10ms.
	allowed.Store(0)
	for step := range 300 {
		now := t0.Add(time.Duration(step+1) * 10 * time.Millisecond)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if l.Delay(now) == 0 {
					allowed.Add(1)
				}
			}()
		}
		wg.Wait()
	}
	if limit := int(3*perSecond) + 1; int(allowed.Load()) > limit {
		checkkit.Expect(t, "at most %d calls in 3s at %v per second", fmt.Sprintf("%d", allowed.Load()), limit, perSecond)
	}
}

func TestReconcilerRequeuesInsteadOfBlocking(t *testing.T) {
	ctx := context.Background()
	cfg := cluster.Config(t)
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = learnv1alpha1.AddToScheme(scheme)
	c := cluster.Client(t, cfg, scheme)
	ns := cluster.Namespace(t, c)
	system := cluster.NewFakeSystem(external.ErrUnavailable)
	burst := checkkit.Between(1, 2)
	perSecond := checkkit.Pick(0.5, 1.0)
	r := &ratelimit.Reconciler{Client: c, System: system, Limiter: ratelimit.New(perSecond, burst), Now: func() time.Time { return t0 }}

	n := burst + 3
	var reqs []ctrl.Request
	for range n {
		db := &learnv1alpha1.Database{ObjectMeta: metav1.ObjectMeta{Name: checkkit.Name("tenant"), Namespace: ns}, Spec: learnv1alpha1.DatabaseSpec{Image: "postgres:17", Replicas: 1, DatabaseName: "tenant", Username: "app", Storage: "1Gi"}}
		if err := c.Create(ctx, db); err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(db)})
	}
	results := make([]ctrl.Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, req := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = r.Reconcile(ctx, req)
		}()
	}
	wg.Wait()
	calls, requeued := 0, 0
	for _, call := range system.Calls() {
		if call.Step == "provision" {
			calls++
		}
	}
	for i := range n {
		if errs[i] != nil {
			checkkit.Expect(t, "no errors when the limiter says wait", fmt.Sprintf("error %q", errs[i]))
		}
		if results[i].RequeueAfter > 0 {
			requeued++
		}
	}
	if calls != burst || requeued != n-burst {
		checkkit.Expect(t, "%d external calls at once and %d reconciles returning RequeueAfter", fmt.Sprintf("%d calls and %d requeues (a worker that waits for the limiter blocks instead of requeueing)", calls, requeued), burst, n-burst)
	}
	// Each of them came back after the limiter's own delay: asked now, the
	// limiter says the same to one more caller.
	wait := r.Limiter.Delay(t0)
	for i := range n {
		if d := results[i].RequeueAfter; d > 0 && !near(d, wait) {
			checkkit.Expect(t, "RequeueAfter %s, the delay the limiter gave", d.String(), wait)
		}
	}
}
