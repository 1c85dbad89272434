package cluster

import (
	"fmt"
	"time"

	"github.com/operator-lab/lab/observe"
)

// How long nothing may happen to an object before a controller counts as
// done with it: time for the watch to bring a change (the check's own, or
// the controller's writes) as a queue add. It is quietPerLag times the
// slowest such delivery seen in this process, within [minQuiet, maxQuiet];
// maxQuiet until one was seen. A loaded machine shows in the lags, so the
// wait grows with it.
const (
	minQuiet    = time.Second
	maxQuiet    = 3 * time.Second
	quietPerLag = 3
	// lagSampleLimit bounds what counts as a delivery: an add later than
	// this after a reconcile ended is another change's, not its writes'.
	lagSampleLimit = 10 * time.Second
)

// quietBeforeDone is the quiet time the events of every object justify.
// A watch add that follows a reconcile's end, before the next get of the
// same object, is the delivery of what the reconcile wrote: the time
// between is a watch lag (an add that came while it ran was quicker still).
func quietBeforeDone(all []observe.Event) time.Duration {
	ended := map[string]time.Time{} // key → end of its last reconcile, until the next get
	var slowest time.Duration
	seen := false
	for _, e := range all {
		switch e.Kind {
		case observe.KindReconcileEnd:
			ended[e.Key] = e.Time
		case observe.KindQueueGet:
			delete(ended, e.Key)
		case observe.KindQueueAdd:
			end, ok := ended[e.Key]
			if !ok {
				continue
			}
			delete(ended, e.Key)
			if lag := e.Time.Sub(end); lag <= lagSampleLimit {
				slowest, seen = max(slowest, lag), true
			}
		}
	}
	if !seen {
		return maxQuiet
	}
	return min(max(quietPerLag*slowest, minQuiet), maxQuiet)
}

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
		all := o.Events()
		return doneWith(ForKey(all, key), quietBeforeDone(all), since, time.Now(), deadline, repeatedErrors)
	}
}

// doneWith is DoneWith's judgement over the events of one key, after quiet
// without any.
func doneWith(events []observe.Event, quiet time.Duration, since, now, deadline time.Time, repeatedErrors int) string {
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
	if inFlight || now.Sub(last) < quiet {
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
