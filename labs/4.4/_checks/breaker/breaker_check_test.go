package breaker_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/operator-lab/lab/labs/checkkit"

	"example.com/lab44/breaker"
)

func call(t *testing.T, b *breaker.Breaker, success bool) {
	t.Helper()
	done, err := b.Allow()
	if err != nil {
		checkkit.Expect(t, "the call to be allowed in state %s", fmt.Sprintf("error %q", err), b.State())
	}
	done(success)
}

func expectState(t *testing.T, b *breaker.Breaker, want breaker.State, when string, args ...any) {
	t.Helper()
	if got := b.State(); got != want {
		checkkit.Expect(t, "state %s "+when, string(got), append([]any{want}, args...)...)
	}
}

// The sequence test comes first: Go runs tests in the order of the file,
// and a wrong state machine is best told by the test that steps it one
// call at a time, not by what it makes of 48 workers.
func TestBreakerStates(t *testing.T) {
	threshold := checkkit.Between(3, 6)
	cooldown := checkkit.Seconds(5, 40)
	clock := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	b := breaker.New(threshold, cooldown, clock)

	t.Run(fmt.Sprintf("opens after %d consecutive failures", threshold), func(t *testing.T) {
		for range threshold - 1 {
			call(t, b, false)
		}
		expectState(t, b, breaker.Closed, "after %d failures", threshold-1)
		call(t, b, true)
		for range threshold - 1 {
			call(t, b, false)
		}
		expectState(t, b, breaker.Closed, "after a success and %d failures (a success resets the count)", threshold-1)
		call(t, b, false)
		expectState(t, b, breaker.Open, "after %d consecutive failures", threshold)
		if _, err := b.Allow(); err == nil {
			checkkit.Expect(t, "Allow to refuse while open", "a call allowed")
		}
	})

	t.Run(fmt.Sprintf("half-open after the %s cooldown, one probe at a time", cooldown), func(t *testing.T) {
		clock.Step(cooldown - time.Millisecond)
		if _, err := b.Allow(); err == nil {
			checkkit.Expect(t, "Allow to refuse 1ms before the cooldown ends", "a call allowed")
		}
		clock.Step(time.Millisecond)
		expectState(t, b, breaker.HalfOpen, "once the cooldown has passed")
		probe, err := b.Allow()
		if err != nil {
			checkkit.Expect(t, "one probe allowed when half-open", fmt.Sprintf("error %q", err))
		}
		if _, err := b.Allow(); err == nil {
			checkkit.Expect(t, "a second call refused while the probe is in flight", "it was allowed")
		}
		probe(false)
		expectState(t, b, breaker.Open, "after the probe failed")
		clock.Step(cooldown)
		call(t, b, true)
		expectState(t, b, breaker.Closed, "after the probe succeeded")
	})
}

func TestBreakerUnderConcurrency(t *testing.T) {
	const workers = 48
	threshold := checkkit.Between(3, 6)
	cooldown := checkkit.Seconds(5, 40)
	clock := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	b := breaker.New(threshold, cooldown, clock)

	t.Run("many workers, random outcomes, a moving clock", func(t *testing.T) {
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 300 {
					done, err := b.Allow()
					if err == nil {
						done(rand.IntN(3) > 0)
					}
					_ = b.State()
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 300 {
				clock.Step(cooldown / 7)
			}
		}()
		wg.Wait()
		// Drain to a known state: after a cooldown one probe closes it.
		clock.Step(cooldown)
		if b.State() != breaker.Closed {
			call(t, b, true)
		}
		expectState(t, b, breaker.Closed, "after a successful call at the end")
	})
	t.Run(fmt.Sprintf("%d workers racing for the probe: one wins", workers), func(t *testing.T) {
		for round := range 5 {
			for range threshold {
				call(t, b, false)
			}
			expectState(t, b, breaker.Open, "after %d failures in a row", threshold)
			clock.Step(cooldown)
			var allowed atomic.Int32
			var probes []func(bool)
			var mu sync.Mutex
			start := make(chan struct{})
			var wg sync.WaitGroup
			for range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					if done, err := b.Allow(); err == nil {
						allowed.Add(1)
						mu.Lock()
						probes = append(probes, done)
						mu.Unlock()
					}
				}()
			}
			close(start)
			wg.Wait()
			if n := allowed.Load(); n != 1 {
				checkkit.Expect(t, "exactly 1 probe allowed in round %d", fmt.Sprintf("%d", n), round+1)
			}
			for _, done := range probes {
				done(true)
			}
			expectState(t, b, breaker.Closed, "after the probe succeeded")
		}
	})

}
