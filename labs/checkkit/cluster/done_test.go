package cluster

import (
	"strings"
	"testing"
	"time"

	"github.com/operator-lab/lab/observe"
)

func TestDoneWith(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ev := func(ms int, kind observe.Kind, mod ...func(*observe.Event)) observe.Event {
		e := observe.Event{Time: at(ms), Kind: kind, Key: "ns/db"}
		for _, m := range mod {
			m(&e)
		}
		return e
	}
	delay := func(d time.Duration) func(*observe.Event) {
		return func(e *observe.Event) { e.Delay = observe.Duration(d) }
	}
	result := func(r, err string) func(*observe.Event) {
		return func(e *observe.Event) { e.Result, e.Error = r, err }
	}
	// One reconcile, after a watch add: get, start, end with result, done.
	reconcile := func(ms int, r, err string) []observe.Event {
		return []observe.Event{
			ev(ms, observe.KindQueueGet), ev(ms+1, observe.KindReconcileStart),
			ev(ms+5, observe.KindReconcileEnd, result(r, err)), ev(ms+6, observe.KindQueueDone),
		}
	}
	join := func(parts ...[]observe.Event) []observe.Event {
		var out []observe.Event
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	since, deadline := at(0), at(15000)
	cases := []struct {
		name     string
		events   []observe.Event
		now      int
		repeated int
		want     string // "" = not done; else a part of the reason
	}{
		{"nothing has happened yet", nil, 2000, 0, ""},
		{"never reconciled, not even once", nil, 5000, 0, ""},
		{"a success, then quiet", join([]observe.Event{ev(10, observe.KindQueueAdd)}, reconcile(20, observe.ResultSuccess, "")), 3100, 0, "in 3s (its last reconcile: reconcile.end success)"},
		{"a success, but not quiet for long enough", reconcile(20, observe.ResultSuccess, ""), 2500, 0, ""},
		{"the wait just began after an old reconcile", reconcile(-9000, observe.ResultSuccess, ""), 2900, 0, ""},
		{"no reaction to the change since the wait began", reconcile(-9000, observe.ResultSuccess, ""), 3100, 0, "nothing has been queued"},
		{"a reconcile still running", join(reconcile(20, observe.ResultSuccess, ""), []observe.Event{ev(40, observe.KindQueueGet)}), 5000, 0, ""},
		{"its own write brought an add not yet taken", join(reconcile(20, observe.ResultSuccess, ""), []observe.Event{ev(30, observe.KindQueueAdd)}), 5000, 0, ""},
		{"a requeue due before the deadline", join(reconcile(20, observe.ResultRequeueAfter, ""), []observe.Event{ev(26, observe.KindQueueAddAfter, delay(10*time.Second))}), 5000, 0, ""},
		{"a requeue due after the deadline", join(reconcile(20, observe.ResultRequeueAfter, ""), []observe.Event{ev(26, observe.KindQueueAddAfter, delay(time.Minute))}), 5000, 0, "due only in 55s, after the wait (its last reconcile: reconcile.end requeue_after)"},
		{"an earlier add wins over a later requeue", join(reconcile(20, observe.ResultRequeueAfter, ""),
			[]observe.Event{ev(26, observe.KindQueueAddAfter, delay(time.Minute)), ev(27, observe.KindQueueAdd)}), 5000, 0, ""},
		{"an add taken by a later get", join(reconcile(20, observe.ResultSuccess, ""), []observe.Event{ev(30, observe.KindQueueAdd)}, reconcile(40, observe.ResultTerminal, "bad spec")), 5000, 0, "nothing has been queued for it or run in 5s (its last reconcile: reconcile.end terminal"},
		{"the same error again and again", join(
			reconcile(20, observe.ResultError, "already exists"), reconcile(40, observe.ResultError, "already exists"),
			reconcile(80, observe.ResultError, "already exists"), []observe.Event{ev(90, observe.KindQueueAddRateLimited, delay(40*time.Millisecond))}), 100, 3, "stuck: its last 3 reconciles"},
		{"stuck before the wait began", join(
			reconcile(-900, observe.ResultError, "x"), reconcile(-800, observe.ResultError, "x"),
			reconcile(-500, observe.ResultError, "x"), []observe.Event{ev(-490, observe.KindQueueAddRateLimited, delay(4*time.Second))}), 10, 3, "stuck"},
		{"errors that differ are not stuck", join(
			reconcile(20, observe.ResultError, "conflict"), reconcile(40, observe.ResultError, "already exists"),
			reconcile(80, observe.ResultError, "already exists"), []observe.Event{ev(90, observe.KindQueueAddRateLimited, delay(40*time.Millisecond))}), 100, 3, ""},
		{"repeated errors only when asked", join(
			reconcile(20, observe.ResultError, "x"), reconcile(40, observe.ResultError, "x"),
			reconcile(80, observe.ResultError, "x"), []observe.Event{ev(90, observe.KindQueueAddRateLimited, delay(40*time.Millisecond))}), 100, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := doneWith(c.events, maxQuiet, since, at(c.now), deadline, c.repeated)
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Errorf("doneWith = %q, want %q", got, c.want)
			}
		})
	}
}

func TestQuietBeforeDoneFollowsTheSlowestWatchDelivery(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	ev := func(ms int, kind observe.Kind, key string) observe.Event {
		return observe.Event{Time: t0.Add(time.Duration(ms) * time.Millisecond), Kind: kind, Key: key}
	}
	cases := []struct {
		name   string
		events []observe.Event
		want   time.Duration
	}{
		{"no delivery seen yet", []observe.Event{ev(0, observe.KindQueueAdd, "a"), ev(1, observe.KindQueueGet, "a"), ev(5, observe.KindReconcileEnd, "a")}, maxQuiet},
		{"quick deliveries: the floor", []observe.Event{ev(5, observe.KindReconcileEnd, "a"), ev(25, observe.KindQueueAdd, "a")}, minQuiet},
		{"the slowest, three times", []observe.Event{
			ev(5, observe.KindReconcileEnd, "a"), ev(25, observe.KindQueueAdd, "a"), ev(30, observe.KindQueueGet, "a"),
			ev(40, observe.KindReconcileEnd, "a"), ev(640, observe.KindQueueAdd, "a"),
			ev(50, observe.KindReconcileEnd, "b"), ev(150, observe.KindQueueAdd, "b"),
		}, 1800 * time.Millisecond},
		{"a slow machine: the ceiling", []observe.Event{ev(5, observe.KindReconcileEnd, "a"), ev(2005, observe.KindQueueAdd, "a")}, maxQuiet},
		{"an add after the next get is no delivery", []observe.Event{
			ev(5, observe.KindReconcileEnd, "a"), ev(10, observe.KindQueueGet, "a"), ev(900, observe.KindQueueAdd, "a"),
		}, maxQuiet},
		{"requeues are no deliveries", []observe.Event{
			ev(5, observe.KindReconcileEnd, "a"), ev(6, observe.KindQueueAddAfter, "a"), ev(7, observe.KindQueueAddRateLimited, "a"),
		}, maxQuiet},
		{"an add long after is another change's", []observe.Event{ev(5, observe.KindReconcileEnd, "a"), ev(60005, observe.KindQueueAdd, "a")}, maxQuiet},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := quietBeforeDone(c.events); got != c.want {
				t.Errorf("quietBeforeDone = %s, want %s", got, c.want)
			}
		})
	}
}
