package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/operator-lab/lab/operator/breaker"
)

var errDown = errors.New("down")

func fail(context.Context) error    { return errDown }
func succeed(context.Context) error { return nil }

func newBreaker(clock *clocktesting.FakeClock, transitions *[]breaker.Transition) *breaker.Breaker {
	var mu sync.Mutex
	return breaker.New(breaker.Options{
		Threshold:   3,
		OpenTimeout: func() time.Duration { return 30 * time.Second },
		Now:         clock.Now,
		OnTransition: func(_ context.Context, t breaker.Transition) {
			mu.Lock()
			defer mu.Unlock()
			*transitions = append(*transitions, t)
		},
	})
}

func TestOpensAtThresholdHalfOpensAfterTimeoutAndClosesOnSuccess(t *testing.T) {
	ctx := context.Background()
	clock := clocktesting.NewFakeClock(time.Unix(1000, 0))
	var transitions []breaker.Transition
	b := newBreaker(clock, &transitions)

	for i := 1; i <= 2; i++ {
		if err := b.Call(ctx, fail); !errors.Is(err, errDown) {
			t.Fatalf("failure %d: err = %v", i, err)
		}
	}
	if st, n := b.State(); st != breaker.Closed || n != 2 {
		t.Fatalf("after 2 failures: %s/%d, want closed/2", st, n)
	}
	_ = b.Call(ctx, fail) // third failure reaches the threshold
	if st, _ := b.State(); st != breaker.Open {
		t.Fatalf("after 3 failures: %s, want open", st)
	}

	called := false
	err := b.Call(ctx, func(context.Context) error { called = true; return nil })
	if !errors.Is(err, breaker.ErrOpen) || called {
		t.Fatalf("open breaker: err = %v, called = %v; want ErrOpen without a call", err, called)
	}

	clock.Step(29 * time.Second)
	if err := b.Call(ctx, succeed); !errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("before the timeout: err = %v, want ErrOpen", err)
	}
	clock.Step(time.Second)
	if err := b.Call(ctx, succeed); err != nil {
		t.Fatalf("probe after the timeout: err = %v", err)
	}
	if st, n := b.State(); st != breaker.Closed || n != 0 {
		t.Fatalf("after a successful probe: %s/%d, want closed/0", st, n)
	}

	want := []breaker.Transition{
		{From: breaker.Closed, To: breaker.Open, Failures: 3, Cooldown: 30 * time.Second},
		{From: breaker.Open, To: breaker.HalfOpen, Failures: 3},
		{From: breaker.HalfOpen, To: breaker.Closed, Failures: 0},
	}
	if len(transitions) != len(want) {
		t.Fatalf("transitions = %+v, want %+v", transitions, want)
	}
	for i := range want {
		if transitions[i] != want[i] {
			t.Errorf("transition %d = %+v, want %+v", i, transitions[i], want[i])
		}
	}
}

func TestFailedProbeReopensForAnotherTimeout(t *testing.T) {
	ctx := context.Background()
	clock := clocktesting.NewFakeClock(time.Unix(1000, 0))
	var transitions []breaker.Transition
	b := newBreaker(clock, &transitions)
	for range 3 {
		_ = b.Call(ctx, fail)
	}
	clock.Step(30 * time.Second)
	if err := b.Call(ctx, fail); !errors.Is(err, errDown) {
		t.Fatalf("probe: err = %v, want the probe's own error", err)
	}
	if st, _ := b.State(); st != breaker.Open {
		t.Fatalf("after a failed probe: %s, want open", st)
	}
	clock.Step(29 * time.Second)
	if err := b.Call(ctx, succeed); !errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("the timeout restarts at the failed probe: err = %v", err)
	}
	last := transitions[len(transitions)-1]
	if last.From != breaker.HalfOpen || last.To != breaker.Open || last.Failures != 4 {
		t.Errorf("last transition = %+v", last)
	}
}

func TestExactlyOneHalfOpenProbeAtATime(t *testing.T) {
	ctx := context.Background()
	clock := clocktesting.NewFakeClock(time.Unix(1000, 0))
	var transitions []breaker.Transition
	b := newBreaker(clock, &transitions)
	for range 3 {
		_ = b.Call(ctx, fail)
	}
	clock.Step(time.Minute)

	release := make(chan struct{})
	probeStarted := make(chan struct{})
	var probes atomic.Int32
	probeDone := make(chan error)
	go func() {
		probeDone <- b.Call(ctx, func(context.Context) error {
			probes.Add(1)
			close(probeStarted)
			<-release
			return nil
		})
	}()
	<-probeStarted

	// While the probe is in flight, every other caller is refused.
	var wg sync.WaitGroup
	var refused atomic.Int32
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := b.Call(ctx, func(context.Context) error { probes.Add(1); return nil })
			if errors.Is(err, breaker.ErrOpen) {
				refused.Add(1)
			}
		}()
	}
	wg.Wait()
	close(release)
	if err := <-probeDone; err != nil {
		t.Fatalf("probe: %v", err)
	}
	if probes.Load() != 1 || refused.Load() != 16 {
		t.Fatalf("calls made = %d, refused = %d; want 1 and 16", probes.Load(), refused.Load())
	}
	if err := b.Call(ctx, succeed); err != nil {
		t.Fatalf("after the probe closed the breaker: %v", err)
	}
}

func TestAbandonedProbeLeavesTheBreakerHalfOpen(t *testing.T) {
	ctx := context.Background()
	clock := clocktesting.NewFakeClock(time.Unix(1000, 0))
	b := breaker.New(breaker.Options{
		Threshold: 1, Now: clock.Now,
		IsFailure: func(err error) bool { return err != nil && !errors.Is(err, context.Canceled) },
	})
	_ = b.Call(ctx, fail)
	clock.Step(time.Minute)
	_ = b.Call(ctx, func(context.Context) error { return context.Canceled })
	if st, _ := b.State(); st != breaker.HalfOpen {
		t.Fatalf("after a cancelled probe: %s, want half-open", st)
	}
	if err := b.Call(ctx, succeed); err != nil {
		t.Fatalf("the next caller probes: %v", err)
	}
	if st, _ := b.State(); st != breaker.Closed {
		t.Fatalf("after its success: %s, want closed", st)
	}
}

func TestSuccessResetsTheFailureCount(t *testing.T) {
	ctx := context.Background()
	var transitions []breaker.Transition
	b := newBreaker(clocktesting.NewFakeClock(time.Unix(1000, 0)), &transitions)
	for range 10 {
		_ = b.Call(ctx, fail)
		_ = b.Call(ctx, fail)
		_ = b.Call(ctx, succeed)
	}
	if st, n := b.State(); st != breaker.Closed || n != 0 || len(transitions) != 0 {
		t.Fatalf("alternating failures below the threshold: %s/%d, transitions %v", st, n, transitions)
	}
}

// slowCall starts a call that the breaker admits now and that returns result
// only when the returned function is called, which waits for its outcome to
// be recorded.
func slowCall(ctx context.Context, t *testing.T, b *breaker.Breaker, result error) (finish func()) {
	t.Helper()
	admitted := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error)
	go func() {
		done <- b.Call(ctx, func(context.Context) error {
			close(admitted)
			<-release
			return result
		})
	}()
	<-admitted
	return func() {
		close(release)
		if err := <-done; !errors.Is(err, result) {
			t.Errorf("slow call: err = %v, want %v", err, result)
		}
	}
}

// TestLateOutcomesAreIgnored: a call admitted while the breaker was closed
// that returns after it changed state belongs to an earlier generation, and
// its outcome changes nothing.
func TestLateOutcomesAreIgnored(t *testing.T) {
	ctx := context.Background()

	t.Run("a late success does not close an open breaker", func(t *testing.T) {
		clock := clocktesting.NewFakeClock(time.Unix(1000, 0))
		var transitions []breaker.Transition
		b := newBreaker(clock, &transitions)
		finish := slowCall(ctx, t, b, nil)
		for range 3 {
			_ = b.Call(ctx, fail)
		}
		finish()
		if st, _ := b.State(); st != breaker.Open {
			t.Fatalf("after a late success: %s, want open", st)
		}
	})

	t.Run("a late failure does not decide while the probe is out", func(t *testing.T) {
		clock := clocktesting.NewFakeClock(time.Unix(1000, 0))
		var transitions []breaker.Transition
		b := newBreaker(clock, &transitions)
		finishLate := slowCall(ctx, t, b, errDown)
		for range 3 {
			_ = b.Call(ctx, fail)
		}
		clock.Step(30 * time.Second)
		finishProbe := slowCall(ctx, t, b, nil) // the half-open probe
		finishLate()
		if st, _ := b.State(); st != breaker.HalfOpen {
			t.Fatalf("after a late failure with the probe out: %s, want half-open", st)
		}
		finishProbe()
		if st, n := b.State(); st != breaker.Closed || n != 0 {
			t.Fatalf("after the probe's success: %s/%d, want closed/0", st, n)
		}
	})

	t.Run("a late failure does not count once the breaker closed again", func(t *testing.T) {
		clock := clocktesting.NewFakeClock(time.Unix(1000, 0))
		var transitions []breaker.Transition
		b := newBreaker(clock, &transitions)
		finish := slowCall(ctx, t, b, errDown) // admitted in the first closed spell
		for range 3 {
			_ = b.Call(ctx, fail)
		}
		clock.Step(30 * time.Second)
		if err := b.Call(ctx, succeed); err != nil { // the probe closes it
			t.Fatalf("probe: %v", err)
		}
		finish()
		for range 2 {
			_ = b.Call(ctx, fail)
		}
		// Two failures in a row since it closed, below the threshold of 3:
		// the late one belongs to the spell before.
		if st, n := b.State(); st != breaker.Closed || n != 2 {
			t.Fatalf("2 failures after closing again, plus a late one: %s/%d, want closed/2", st, n)
		}
	})
}

// TestObserversSeeEveryCountAndRefusal: the live view shows the failure
// count as it changes, not only when the state does, and each refused call
// with how long until the probe.
func TestObserversSeeEveryCountAndRefusal(t *testing.T) {
	ctx := context.Background()
	clock := clocktesting.NewFakeClock(time.Unix(1000, 0))
	var seen []string
	b := breaker.New(breaker.Options{
		Threshold:   3,
		OpenTimeout: func() time.Duration { return 30 * time.Second },
		Now:         clock.Now,
		OnTransition: func(_ context.Context, t breaker.Transition) {
			seen = append(seen, fmt.Sprintf("%s→%s failures=%d cooldown=%s", t.From, t.To, t.Failures, t.Cooldown))
		},
		OnFailureCount: func(_ context.Context, st breaker.State, n int) {
			seen = append(seen, fmt.Sprintf("%s failures=%d", st, n))
		},
		OnRefuse: func(_ context.Context, r breaker.Refusal) {
			seen = append(seen, fmt.Sprintf("refused %s failures=%d probe in %s", r.State, r.Failures, r.ProbeIn))
		},
	})
	_ = b.Call(ctx, succeed) // nothing to reset: no news
	_ = b.Call(ctx, fail)
	_ = b.Call(ctx, succeed)
	_ = b.Call(ctx, fail)
	_ = b.Call(ctx, fail)
	_ = b.Call(ctx, fail)
	clock.Step(10 * time.Second)
	_ = b.Call(ctx, succeed)
	clock.Step(20 * time.Second)
	finish := slowCall(ctx, t, b, nil) // the probe, out while another call comes
	_ = b.Call(ctx, succeed)
	finish()
	want := []string{
		"closed failures=1",
		"closed failures=0",
		"closed failures=1",
		"closed failures=2",
		"closed→open failures=3 cooldown=30s",
		"refused open failures=3 probe in 20s",
		"open→half-open failures=3 cooldown=0s",
		"refused half-open failures=3 probe in 0s",
		"half-open→closed failures=0 cooldown=0s",
	}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("observed:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
}
