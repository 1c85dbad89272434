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
	// First, as everything below moves time only through the now it
	// passes: a limiter that reads the wall clock must be told so, not
	// that it spends its tokens twice.
	t.Run("time is the now Delay is given", func(t *testing.T) {
		ownClock(t, perSecond, several)
	})
	for _, burst := range []int{1, several} {
		t.Run(fmt.Sprintf("a burst of %d, then one call every %s", burst, interval), func(t *testing.T) {
			sequence(t, ratelimit.New(perSecond, burst), burst, interval)
		})
	}
	t.Run(fmt.Sprintf("a burst of %d shared by many workers", several), func(t *testing.T) {
		shared(t, perSecond, several)
	})
}

// script asks a new limiter, at base, for the burst, one call more, that
// call again once its delay has passed, and one more an hour later.
func script(perSecond float64, burst int, base time.Time) []time.Duration {
	l := ratelimit.New(perSecond, burst)
	var out []time.Duration
	for range burst + 1 {
		out = append(out, l.Delay(base))
	}
	d := out[burst]
	out = append(out, l.Delay(base.Add(d)), l.Delay(base.Add(d+time.Hour)))
	return out
}

// wallClockAPI names the calls that read the wall clock and their
// counterparts that take it.
const wallClockAPI = "Reserve, Reservation.Delay and Cancel read time.Now; ReserveN(now, 1), DelayFrom(now) and CancelAt(now) take it"

// ownClock runs the script a year before the wall clock and a year after:
// a limiter that measures time by the now it is given answers both the
// same, and lets the call an hour later go.
func ownClock(t *testing.T, perSecond float64, burst int) {
	t.Helper()
	wall := time.Now()
	before, after := script(perSecond, burst, wall.AddDate(-1, 0, 0)), script(perSecond, burst, wall.AddDate(1, 0, 0))
	for i := range before {
		if !near(before[i], after[i]) {
			checkkit.Expect(t, "Delay to answer by the now it is given: the same a year before the wall clock as a year after",
				fmt.Sprintf("%s and %s for call %d of the same sequence: it reads time.Now somewhere (%s)", before[i], after[i], i+1, wallClockAPI))
		}
	}
	if late := before[len(before)-1]; late != 0 {
		checkkit.Expect(t, "a call an hour after the burst (by the now passed to Delay) to go at once",
			fmt.Sprintf("a delay of %s: the limiter measures time by time.Now, not by its now (%s)", late, wallClockAPI))
	}
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
	// Slow rates: the wall clock does not refill a token between the two
	// rounds below, so a Reconcile that asks at time.Now shows. And never
	// one per second: a fixed RequeueAfter of 1s is not the limiter's delay.
	perSecond := checkkit.Pick(0.4, 0.5)
	tracked, activity := cluster.Track(c)
	r := &ratelimit.Reconciler{Client: tracked, System: system, Limiter: ratelimit.New(perSecond, burst), Now: func() time.Time { return t0 }}

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
	var (
		wg       sync.WaitGroup
		returned atomic.Int32
	)
	activity.Touch() // the quiet counts from here, not from before the creates
	for i, req := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = r.Reconcile(ctx, req)
			returned.Add(1)
			activity.Touch()
		}()
	}
	allReturned := make(chan struct{})
	go func() { wg.Wait(); close(allReturned) }()
	// A Reconcile that is still running once nothing has been asked of the
	// API server for a while is waiting for the limiter: no need to wait
	// for it to wake up (seconds, at these rates) to say so.
	const stallAfter = 1500 * time.Millisecond
	if !activity.WaitOrStall(allReturned, stallAfter) {
		waiting := n - int(returned.Load())
		checkkit.Expect(t, "%s at once and %s returning RequeueAfter", fmt.Sprintf("%s, and %d of the %d reconciles still running %s after their last call to the API server (a worker that waits for the limiter blocks instead of requeueing)", checkkit.Count(provisions(system), "call"), waiting, n, stallAfter), checkkit.Count(burst, "external call"), checkkit.Count(n-burst, "reconcile"))
	}
	calls, requeued := provisions(system), 0
	for i := range n {
		if errs[i] != nil {
			checkkit.Expect(t, "no errors when the limiter says wait", fmt.Sprintf("error %q", errs[i]))
		}
		if results[i].RequeueAfter > 0 {
			requeued++
		}
	}
	if calls != burst || requeued != n-burst {
		checkkit.Expect(t, "%s at once and %s returning RequeueAfter", fmt.Sprintf("%s and %s (a worker that waits for the limiter blocks instead of requeueing)", checkkit.Count(calls, "call"), checkkit.Count(requeued, "requeue")), checkkit.Count(burst, "external call"), checkkit.Count(n-burst, "reconcile"))
	}
	// An hour later by r.Now the bucket is full again: of the requeued
	// reconciles, burst call the system.
	later := t0.Add(time.Hour)
	r.Now = func() time.Time { return later }
	for i := range n {
		if results[i].RequeueAfter > 0 {
			if _, err := r.Reconcile(ctx, reqs[i]); err != nil {
				checkkit.Expect(t, "no errors from a requeued reconcile", fmt.Sprintf("error %q", err))
			}
		}
	}
	if again := provisions(system) - calls; again != burst {
		checkkit.Expect(t, "%d of the %d requeued reconciles to call the system when they came back an hour later by r.Now", fmt.Sprintf("%d (does Reconcile ask the limiter at time.Now instead of r.Now()?)", again), burst, n-burst)
	}
	// Each of them came back after the limiter's own delay: the one it
	// gives the call after the burst.
	ref := ratelimit.New(perSecond, burst)
	for range burst {
		ref.Delay(t0)
	}
	wait := ref.Delay(t0)
	for i := range n {
		if d := results[i].RequeueAfter; d > 0 && !near(d, wait) {
			checkkit.Expect(t, "RequeueAfter %s, the delay the limiter gave", d.String(), wait)
		}
	}
}

// provisions counts the calls to Provision the system has seen.
func provisions(system *cluster.FakeSystem) int {
	n := 0
	for _, call := range system.Calls() {
		if call.Step == "provision" {
			n++
		}
	}
	return n
}
