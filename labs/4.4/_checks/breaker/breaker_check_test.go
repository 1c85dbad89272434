package breaker_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/operator-lab/lab/labs/checkkit"

	"example.com/lab44/breaker"
)

// call makes one call that must be allowed and reports its outcome; when
// says where in the sequence it is, for the message.
func call(t *testing.T, b *breaker.Breaker, success bool, when string, args ...any) {
	t.Helper()
	done, err := b.Allow()
	if err != nil {
		checkkit.Expect(t, "the call to be allowed "+when, fmt.Sprintf("error %q (state %s)", err, b.State()), args...)
	}
	done(success)
}

func expectState(t *testing.T, b *breaker.Breaker, want breaker.State, when string, args ...any) {
	t.Helper()
	if got := b.State(); got != want {
		checkkit.Expect(t, "state %s "+when, string(got), append([]any{want}, args...)...)
	}
}

// failures says "1 failure" or "n failures".
func failures(n int) string {
	if n == 1 {
		return "1 failure"
	}
	return fmt.Sprintf("%d failures", n)
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
		for i := range threshold - 1 {
			call(t, b, false, "after %s (it opens at %d in a row)", failures(i), threshold)
		}
		expectState(t, b, breaker.Closed, "after %s", failures(threshold-1))
		call(t, b, true, "after %s", failures(threshold-1))
		// The failures before the success no longer count: a breaker that
		// kept them refuses one of these calls, and that is what to say.
		for i := range threshold - 1 {
			call(t, b, false, "after %s, a success, then %s (a success resets the count)",
				failures(threshold-1), failures(i))
		}
		expectState(t, b, breaker.Closed, "after a success and %s (a success resets the count)", failures(threshold-1))
		call(t, b, false, "after a success and %s", failures(threshold-1))
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
		expectState(t, b, breaker.HalfOpen, "once the cooldown has passed (by the Clock given to New)")
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
		call(t, b, true, "as the probe, a full cooldown after the failed probe")
		expectState(t, b, breaker.Closed, "after the probe succeeded")
	})
}

// The hammering: hammerRounds rounds of hammerWorkers goroutines making
// hammerCalls calls each, some 23,000 calls in a fraction of a second.
const (
	hammerWorkers = 48
	hammerRounds  = 60
	hammerCalls   = 8
)

// hammer runs rounds of workers released together by a barrier, so that
// their calls really overlap: within a round every worker makes a few
// calls with random outcomes and reads the state while another goroutine
// moves the clock on. Rounds alternate between mostly failing calls (the
// breaker opens) and mostly succeeding ones (the probe closes it), so
// every state and every transition is crossed again and again. A field
// touched without the lock is then seen by the race detector in every
// run: two workers of one round are ordered by nothing but the breaker's
// own mutex.
func hammer(b *breaker.Breaker, clock *clocktesting.FakeClock, cooldown time.Duration) {
	for round := range hammerRounds {
		succeed := 1 // in 4 calls: mostly failures…
		if round%2 == 1 {
			succeed = 3 // …then mostly successes
		}
		var ready, wg sync.WaitGroup
		start := make(chan struct{})
		for range hammerWorkers {
			ready.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				ready.Done()
				<-start
				for range hammerCalls {
					_ = b.State()
					if done, err := b.Allow(); err == nil {
						runtime.Gosched() // the call: others run meanwhile
						done(rand.IntN(4) < succeed)
					}
				}
			}()
		}
		ready.Add(1)
		wg.Add(1)
		go func() { // the clock moves while the calls are in flight
			defer wg.Done()
			ready.Done()
			<-start
			for range hammerCalls / 2 {
				clock.Step(cooldown / 3)
				runtime.Gosched()
			}
		}()
		ready.Wait()
		close(start)
		wg.Wait()
	}
}

func TestBreakerUnderConcurrency(t *testing.T) {
	const workers = hammerWorkers
	threshold := checkkit.Between(3, 6)
	cooldown := checkkit.Seconds(5, 40)
	clock := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	b := breaker.New(threshold, cooldown, clock)

	t.Run(fmt.Sprintf("%d workers at once, random outcomes, a moving clock", workers), func(t *testing.T) {
		hammer(b, clock, cooldown)
		// Back to a known state: a cooldown later one successful call
		// closes it (the probe) or clears the count of failures (closed).
		clock.Step(cooldown)
		call(t, b, true, "a cooldown after the workers' last calls (state %s)", b.State())
		expectState(t, b, breaker.Closed, "after a successful call at the end")
	})
	t.Run(fmt.Sprintf("%d workers racing for the probe: one wins", workers), func(t *testing.T) {
		for round := range 5 {
			for i := range threshold {
				call(t, b, false, "in round %d after %s (it opens at %d in a row)", round+1, failures(i), threshold)
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
