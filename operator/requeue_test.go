package operator_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator"
	"github.com/operator-lab/lab/operator/api/v1alpha1"
	"github.com/operator-lab/lab/operator/internal/optest"
)

// queueCallsAfter returns the queue calls controller-runtime made for key as
// the result of the reconcile that ended at index end: the forget/add calls
// up to and including queue.done. Plain queue.add calls that come from watch
// events (they carry a cause) are left out: they are not the result's doing.
func queueCallsAfter(events []observe.Event, end int, key string) []string {
	var calls []string
	for _, e := range events[end+1:] {
		if e.Key != key || !strings.HasPrefix(string(e.Kind), "queue.") {
			continue
		}
		switch e.Kind {
		case observe.KindQueueGet:
			continue
		case observe.KindQueueAdd:
			if e.Cause != 0 {
				continue
			}
		}
		call := string(e.Kind)
		if e.Kind == observe.KindQueueAddAfter {
			call += "(" + e.Delay.String() + ")"
		}
		calls = append(calls, call)
		if e.Kind == observe.KindQueueDone {
			break
		}
	}
	return calls
}

// firstEnd returns the index of the first reconcile.end for key.
func firstEnd(events []observe.Event, key string) int {
	return slices.IndexFunc(events, func(e observe.Event) bool {
		return e.Kind == observe.KindReconcileEnd && e.Key == key
	})
}

// TestRequeueSwitchProducesExactlyTheDocumentedQueueCalls checks, on the lab
// 3.1 controller with its dependency down, that each requeue strategy leads
// to the queue calls of controller-runtime's reconcileHandler: error and
// Requeue → AddRateLimited; RequeueAfter → Forget + AddAfter; TerminalError →
// nothing but Done; success → Forget.
func TestRequeueSwitchProducesExactlyTheDocumentedQueueCalls(t *testing.T) {
	cases := []struct {
		set        string
		wantResult string
		wantCalls  []string
	}{
		{"external=down,requeue=error", observe.ResultError, []string{"queue.add_rate_limited", "queue.done"}},
		{"external=down,requeue=requeue", observe.ResultRequeue, []string{"queue.add_rate_limited", "queue.done"}},
		// 5s dependency retry at timescale 10.
		{"external=down,requeue=after,timescale=10", observe.ResultRequeueAfter, []string{"queue.forget", "queue.add_after(500ms)", "queue.done"}},
		{"external=down,requeue=terminal", observe.ResultTerminal, []string{"queue.done"}},
		{"external=healthy", observe.ResultSuccess, []string{"queue.forget", "queue.done"}},
	}
	for _, tc := range cases {
		t.Run(tc.set, func(t *testing.T) {
			t.Parallel()
			env := optest.Start(t, optest.Options{Lab: operator.Lab31, Set: tc.set})
			hw := &v1alpha1.HelloWorld{
				ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: env.Namespace},
				Spec:       v1alpha1.HelloWorldSpec{Message: "hi", Count: 2},
			}
			if err := env.Client.Create(context.Background(), hw); err != nil {
				t.Fatal(err)
			}
			key := env.Namespace + "/hello"
			events := env.WaitFor(t, 30*time.Second, "the first reconcile to finish", func(evs []observe.Event) bool {
				end := firstEnd(evs, key)
				return end >= 0 && slices.Contains(queueCallsAfter(evs, end, key), "queue.done")
			})
			end := firstEnd(events, key)
			if got := events[end].Result; got != tc.wantResult {
				t.Fatalf("result = %q, want %q\n%s", got, tc.wantResult, optest.Dump(events))
			}
			if got := queueCallsAfter(events, end, key); !slices.Equal(got, tc.wantCalls) {
				t.Fatalf("queue calls after the reconcile = %v, want %v\n%s", got, tc.wantCalls, optest.Dump(events))
			}
		})
	}
}

// TestTerminalSetsFailedConditionAndStopsRetrying: with requeue=terminal the
// status carries Failed=True and nothing requeues the object.
func TestTerminalSetsFailedConditionAndStopsRetrying(t *testing.T) {
	t.Parallel()
	env := optest.Start(t, optest.Options{Lab: operator.Lab31, Set: "external=down,requeue=terminal"})
	ctx := context.Background()
	hw := &v1alpha1.HelloWorld{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: env.Namespace},
		Spec:       v1alpha1.HelloWorldSpec{Message: "hi"},
	}
	if err := env.Client.Create(ctx, hw); err != nil {
		t.Fatal(err)
	}
	key := env.Namespace + "/hello"
	// The first reconcile fails and writes the status; that write is a watch
	// event, so a second reconcile follows, fails the same way and writes
	// nothing. Wait until both are done with the queue.
	env.WaitFor(t, 30*time.Second, "two terminal reconciles", func(evs []observe.Event) bool {
		return count(evs, key, observe.KindReconcileEnd, observe.ResultTerminal) >= 2 && count(evs, key, observe.KindQueueDone, "") >= 2
	})
	got := &v1alpha1.HelloWorld{}
	if err := env.Client.Get(ctx, clientKey(env.Namespace, "hello"), got); err != nil {
		t.Fatal(err)
	}
	failed := findCondition(got.Status.Conditions, v1alpha1.ConditionFailed)
	if failed == nil || failed.Status != metav1.ConditionTrue || failed.Reason != v1alpha1.ReasonGaveUp || failed.ObservedGeneration != got.Generation {
		t.Fatalf("persisted Failed condition = %+v", failed)
	}
	// A terminal result adds nothing to the queue: every add of this key is
	// a watch event's (the status write), never a rate-limited or delayed one.
	for _, e := range env.Recorder.Events() {
		if e.Key == key && (e.Kind == observe.KindQueueAddRateLimited || e.Kind == observe.KindQueueAddAfter) {
			t.Fatalf("terminal error was requeued: %s\n%s", fmt.Sprint(e.Kind), optest.Dump(env.Recorder.Events()))
		}
	}
}

// TestOpenBreakerRefusalsBackOffInsteadOfLooping: with requeue=requeue and
// the breaker open, each refused call is a step of its reconcile (a
// breaker event saying when the probe comes), it takes no rate-limiter
// token, and so the limiter's RequeueAfter — which makes the queue Forget
// the key's failures — never resets the refusals' backoff: the retries
// space out 5ms, 10ms, 20ms, … rather than looping several times a second
// until the breaker lets its probe through.
func TestOpenBreakerRefusalsBackOffInsteadOfLooping(t *testing.T) {
	t.Parallel()
	// timescale 10: the breaker stays open 6s, the limiter allows 20 calls/s.
	env := optest.Start(t, optest.Options{Lab: operator.Lab44,
		Set: "timescale=10,external=down,requeue=requeue,breaker=on,ratelimit=on,backoff=controller"})
	createDatabase(t, env, "looping")
	key := env.Namespace + "/looping"
	transition := func(evs []observe.Event, from, to string) int {
		return slices.IndexFunc(evs, func(e observe.Event) bool {
			b := e.Breaker()
			return e.Kind == observe.KindBreaker && b.Transition() && b.From == from && b.State == to
		})
	}
	events := env.WaitFor(t, waitLong, "the breaker to open and, after its cooldown, let a probe through", func(evs []observe.Event) bool {
		return transition(evs, "closed", "open") >= 0 && transition(evs, "open", "half-open") >= 0
	})
	opened, probed := transition(events, "closed", "open"), transition(events, "open", "half-open")
	if cooldown := events[opened].Breaker().ProbeIn; cooldown != 6*time.Second {
		t.Errorf("the open event says the probe comes in %s, want the cooldown 6s", cooldown)
	}
	window := events[opened+1 : probed]
	ends, refusedIn := 0, map[string]bool{}
	var failures []int
	for _, e := range window {
		if e.Key != key {
			continue
		}
		switch e.Kind {
		case observe.KindReconcileEnd:
			ends++
		case observe.KindBreaker:
			if b := e.Breaker(); b.Refused {
				refusedIn[e.ReconcileID] = true
				if b.ProbeIn <= 0 || b.ProbeIn > 6*time.Second {
					t.Errorf("a refusal says the probe comes in %s", b.ProbeIn)
				}
			}
		case observe.KindQueueForget:
			t.Errorf("queue.forget while the breaker was open: the refusals' backoff was reset\n%s", optest.Dump(window))
		case observe.KindQueueAddRateLimited:
			failures = append(failures, e.Failures)
		case observe.KindRateLimit:
			t.Errorf("a rate-limiter check while the breaker was open: a refused call took a token")
		}
	}
	// 5ms·2ⁿ adds up to the 6s cooldown within about 11 retries; a few more
	// come from the status writes' own watch events.
	if ends > 20 {
		t.Errorf("%d reconciles in the breaker's 6s cooldown, want at most 20 (a hot loop)\n%s", ends, optest.Dump(window))
	}
	for _, e := range window {
		// The reconcile whose failed call opened the breaker ends in the window too.
		opener := e.ReconcileID == events[opened].ReconcileID
		if e.Kind == observe.KindReconcileEnd && e.Key == key && !opener && !refusedIn[e.ReconcileID] {
			t.Errorf("reconcile %s ended %s with the breaker open and no refusal among its steps", e.ReconcileID, e.Result)
		}
	}
	for i := 1; i < len(failures); i++ {
		if failures[i] <= failures[i-1] {
			t.Errorf("rate-limited requeues' failure counts %v do not keep growing", failures)
			break
		}
	}
}
