package cluster

import (
	"fmt"
	"time"

	"github.com/operator-lab/lab/observe"
)

// quietBeforeDone is how long nothing may happen to an object before a
// controller counts as done with it: time for the watch to bring a change
// (the check's own, or the controller's writes) as a queue add, even on a
// loaded machine.
const quietBeforeDone = 3 * time.Second

// DoneWith returns, for checkkit.EventuallyUnless, the evidence that the
// observed controller will do nothing more with key ("namespace/name")
// before the wait's deadline: no reconcile of key runs; nothing is queued
// for it, or only for after the deadline; and nothing has happened to key
// for quietBeforeDone, counted from the call at the earliest (the wait
// begins after a change whose watch event may still be on its way). Then
// the condition awaited cannot come true by the controller's doing, and the
// wait fails at once instead of waiting out its timeout.
//
// With repeatedErrors > 0, a controller whose last repeatedErrors
// reconciles of key all failed with the same error counts as done too: it
// is stuck, retrying with growing delays. Only for waits where no correct
// reconciler fails repeatedly, and nothing the check changes can mend
// the error.
func (o *Observer) DoneWith(key string, repeatedErrors int) func(deadline time.Time) string {
	since := time.Now()
	return func(deadline time.Time) string {
		return doneWith(ForKey(o.Events(), key), since, time.Now(), deadline, repeatedErrors)
	}
}

// doneWith is DoneWith's judgement over the events of one key.
func doneWith(events []observe.Event, since, now, deadline time.Time, repeatedErrors int) string {
	var (
		ends     []observe.Event // reconcile ends
		inFlight bool
		pending  []observe.Event // adds since the last get
		last     = since
	)
	for _, e := range events {
		if e.Time.After(last) {
			last = e.Time
		}
		switch e.Kind {
		case observe.KindQueueAdd, observe.KindQueueAddAfter, observe.KindQueueAddRateLimited:
			pending = append(pending, e)
		case observe.KindQueueGet:
			// The priority queue keeps one entry per key: a get takes
			// every add made before it.
			pending, inFlight = nil, true
		case observe.KindQueueDone:
			inFlight = false
		case observe.KindReconcileEnd:
			ends = append(ends, e)
		}
	}
	if len(ends) == 0 {
		return "" // not even the first reconcile yet: nothing to judge by
	}
	end := ends[len(ends)-1]
	lastReconcile := "its last reconcile: " + end.Brief()
	if n := repeatedErrors; n > 0 && len(ends) >= n {
		same := true
		for _, e := range ends[len(ends)-n:] {
			same = same && e.Result == observe.ResultError && e.Error == end.Error
		}
		if same {
			return fmt.Sprintf("the controller is stuck: its last %d reconciles of it failed with the same error (%s)", n, end.Brief())
		}
	}
	if inFlight || now.Sub(last) < quietBeforeDone {
		return ""
	}
	if len(pending) == 0 {
		return fmt.Sprintf("the controller is done with it: nothing has been queued for it or run in %s (%s)", now.Sub(last).Round(time.Second), lastReconcile)
	}
	due := pending[0].Time.Add(time.Duration(pending[0].Delay))
	for _, e := range pending[1:] {
		if d := e.Time.Add(time.Duration(e.Delay)); d.Before(due) {
			due = d
		}
	}
	if !due.After(deadline) {
		return ""
	}
	return fmt.Sprintf("the controller is done with it for now: its next reconcile is due only in %s, after the wait (%s)", due.Sub(now).Round(time.Second), lastReconcile)
}
