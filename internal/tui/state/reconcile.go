package state

import (
	"slices"
	"sort"
	"time"

	"github.com/operator-lab/lab/observe"
)

// Reconcile is one call of Reconcile seen end to end: what put its key in
// the queue, the dequeue, everything it did, its result, and what the work
// queue did with that result.
type Reconcile struct {
	// N numbers reconciles from 1 in the order they started.
	N          int
	ID         string
	Controller string
	Key        string

	// Trigger is the watch event behind the first queue add that carries a
	// cause, when it is still known; nil for requeues and resyncs.
	Trigger *observe.Event
	// TriggerKeptGeneration: the trigger is a MODIFIED event that left the
	// object's generation as it was — a status or metadata write, often
	// the controller's own, not a change of the spec.
	TriggerKeptGeneration bool
	// Adds are the queue adds merged into this one reconcile (at most
	// Limits.AddsPerReconcile); AddCount counts all of them.
	Adds     []observe.Event
	AddCount int
	// Get is the dequeue that handed the key to a worker.
	Get *observe.Event

	Start observe.Event
	End   *observe.Event
	// Steps are the events emitted inside the reconcile (client calls,
	// phases, conditions, breaker, backoff, rate limiter, external calls),
	// at most Limits.StepsPerReconcile; StepsDropped counts the rest.
	Steps        []observe.Event
	StepsDropped int
	// Outcome is what the controller did to the queue after Reconcile
	// returned: forget, add_after, add_rate_limited — or nothing.
	Outcome []observe.Event
	// Done is set once the worker called queue.Done for the key.
	Done bool
}

// Result is the reconcile result, or "" while it is still running.
func (r *Reconcile) Result() string {
	if r.End == nil {
		return ""
	}
	return r.End.Result
}

// Running reports whether Reconcile has not returned yet.
func (r *Reconcile) Running() bool { return r.End == nil }

// Duration is how long Reconcile took (as reported), or how long it has run so far.
func (r *Reconcile) Duration(now time.Time) time.Duration {
	if r.End != nil {
		if r.End.DurationMs > 0 {
			return time.Duration(r.End.DurationMs * float64(time.Millisecond))
		}
		return r.End.Time.Sub(r.Start.Time)
	}
	return now.Sub(r.Start.Time)
}

// Waited is how long the key sat in the queue between its first merged add
// and the dequeue, when both are known.
func (r *Reconcile) Waited() (time.Duration, bool) {
	if r.Get == nil || len(r.Adds) == 0 {
		return 0, false
	}
	first := r.Adds[0]
	ready := first.Time.Add(first.Delay.D())
	if ready.After(r.Get.Time) {
		return 0, true
	}
	return r.Get.Time.Sub(ready), true
}

// DelayedOutcome is the delayed re-add the queue scheduled after this
// reconcile (add_after or add_rate_limited), if any.
func (r *Reconcile) DelayedOutcome() (observe.Event, bool) {
	for _, e := range r.Outcome {
		if e.Kind == observe.KindQueueAddAfter || e.Kind == observe.KindQueueAddRateLimited {
			return e, true
		}
	}
	return observe.Event{}, false
}

func (r *Reconcile) addStep(e observe.Event, limit int) {
	if len(r.Steps) >= limit {
		r.StepsDropped++
		return
	}
	r.Steps = append(r.Steps, e)
}

func (r *Reconcile) lessonBackoff() (observe.Event, bool) {
	for i := len(r.Steps) - 1; i >= 0; i-- {
		if r.Steps[i].Kind == observe.KindBackoff {
			return r.Steps[i], true
		}
	}
	return observe.Event{}, false
}

// waitedForLimiter reports whether the client-side rate limiter deferred
// one of r's external calls.
func (r *Reconcile) waitedForLimiter() bool {
	return slices.ContainsFunc(r.Steps, func(e observe.Event) bool {
		return e.Kind == observe.KindRateLimit && e.RateLimit().Wait > 0
	})
}

// Reconciles returns the reconciles held, oldest first.
func (s *State) Reconciles() []*Reconcile { return s.reconciles.Slice() }

// ReconcileCount is how many reconciles are held.
func (s *State) ReconcileCount() int { return s.reconciles.Len() }

// ReconcileAt returns the i-th held reconcile, oldest first.
func (s *State) ReconcileAt(i int) *Reconcile { return s.reconciles.At(i) }

// LastReconcile returns the most recently started reconcile.
func (s *State) LastReconcile() (*Reconcile, bool) { return s.reconciles.Last() }

// ReconcileByN finds a held reconcile by its number.
func (s *State) ReconcileByN(n int) (*Reconcile, bool) {
	// Numbers grow oldest to newest, so the newest is found first from the end.
	for i := s.reconciles.Len() - 1; i >= 0; i-- {
		if r := s.reconciles.At(i); r.N == n {
			return r, true
		} else if r.N < n {
			break
		}
	}
	return nil, false
}

// LastReconcileOf returns the newest held reconcile of key.
func (s *State) LastReconcileOf(key string) (*Reconcile, bool) {
	for i := s.reconciles.Len() - 1; i >= 0; i-- {
		if r := s.reconciles.At(i); r.Key == key {
			return r, true
		}
	}
	return nil, false
}

// RequeuedBy finds the held reconcile whose result the queue add was: the
// reconcile that asked for the requeue (an AddAfter or AddRateLimited in
// its outcome) which led to a later reconcile.
func (s *State) RequeuedBy(add observe.Event) (*Reconcile, bool) {
	if add.Seq == 0 {
		return nil, false
	}
	for i := s.reconciles.Len() - 1; i >= 0; i-- {
		r := s.reconciles.At(i)
		for _, e := range r.Outcome {
			if e.Seq == add.Seq {
				return r, true
			}
		}
	}
	return nil, false
}

// ReconcileByID finds a held reconcile.
func (s *State) ReconcileByID(id string) (*Reconcile, bool) {
	r, ok := s.byID[id]
	return r, ok
}

func (s *State) onReconcileStart(e observe.Event) {
	if prev, ok := s.active[e.Key]; ok {
		// queue.Done for the previous reconcile never arrived (events
		// dropped): close it so its outcome is not lost.
		s.closeReconcile(prev)
	}
	s.numbered++
	s.totals.Reconciles++
	r := &Reconcile{N: s.numbered, ID: e.ReconcileID, Controller: e.Controller, Key: e.Key, Start: e}
	if p, ok := s.pending[e.Key]; ok {
		r.Adds, r.AddCount, r.Get = p.adds, p.addCount, p.get
		delete(s.pending, e.Key)
		if p.next != nil {
			s.pending[e.Key] = p.next
		}
	}
	for _, add := range r.Adds {
		if add.Cause == 0 {
			continue
		}
		if w, ok := s.watches[add.Cause]; ok {
			r.Trigger = &w
			r.TriggerKeptGeneration = s.sameGeneration[w.Seq]
			break
		}
	}
	if evicted, ok := s.reconciles.Push(r); ok {
		delete(s.byID, evicted.ID)
		if s.active[evicted.Key] == evicted {
			delete(s.active, evicted.Key)
		}
	}
	if r.ID != "" {
		s.byID[r.ID] = r
	}
	s.active[e.Key] = r
	o := s.ensureObject(e.Key, "", e.Time)
	if r.Trigger != nil && r.Trigger.Key == e.Key {
		o.observeWatch(*r.Trigger) // ignored when a newer watch event was seen
	}
}

func (s *State) onReconcileEnd(e observe.Event) {
	r, ok := s.byID[e.ReconcileID]
	if !ok {
		r, ok = s.active[e.Key]
	}
	if !ok {
		return
	}
	end := e
	r.End = &end
	s.totals.ByResult[e.Result]++
	if o, ok := s.objects[r.Key]; ok {
		o.Reconciles++
		o.LastResult = e.Result
		o.LastError = e.Error
	}
	// A terminal error (or a plain success the queue forgets later) may
	// have no delayed outcome; the series entry is written at queue.Done.
}

// closeReconcile marks r finished and records its outcome in the key's
// retry series.
func (s *State) closeReconcile(r *Reconcile) {
	if r.Done {
		return
	}
	r.Done = true
	if s.active[r.Key] == r {
		delete(s.active, r.Key)
	}
	if r.End == nil {
		return
	}
	retry := Retry{At: r.End.Time, Result: r.End.Result, Error: r.End.Error, Reconcile: r.N}
	if d, ok := r.DelayedOutcome(); ok {
		retry.Delay = d.Delay.D()
		retry.Failures = d.Failures
		retry.By = chooserOf(d.Kind)
		if b, ok := r.lessonBackoff(); ok && d.Kind == observe.KindQueueAddAfter {
			retry.By = ChosenByLesson
			retry.Attempt = b.Attempt
		}
		retry.LimiterWait = retry.By == ChosenByRequeueAfter && r.waitedForLimiter()
		if retry.By == ChosenByRequeueAfter && r.TriggerKeptGeneration {
			if v, ok := s.series[r.Key]; ok {
				last, ok := v.Retries.Last()
				retry.RestOfWait = ok && last.By == ChosenByLesson
			}
		}
	}
	s.recordRetry(r.Key, retry)
}

func chooserOf(k observe.Kind) Chooser {
	if k == observe.KindQueueAddRateLimited {
		return ChosenByRateLimiter
	}
	return ChosenByRequeueAfter
}

// isOutcome reports whether e is the controller acting on the result of a
// reconcile of the same key that has returned but not yet called Done.
func (s *State) outcomeOf(e observe.Event) (*Reconcile, bool) {
	r, ok := s.active[e.Key]
	if !ok || r.End == nil || r.Done {
		return nil, false
	}
	switch e.Kind {
	case observe.KindQueueForget, observe.KindQueueAddAfter, observe.KindQueueAddRateLimited:
		return r, true
	}
	return nil, false
}

func (s *State) pendingFor(key string) *pendingWork {
	p, ok := s.pending[key]
	if !ok {
		p = &pendingWork{}
		s.pending[key] = p
	}
	return p
}

func (s *State) onQueueAdd(e observe.Event) {
	if r, ok := s.outcomeOf(e); ok {
		r.Outcome = append(r.Outcome, e)
	} else {
		if e.Kind != observe.KindQueueAdd && e.Delay > 0 {
			// A delayed add outside any reconcile (for example a handler
			// calling AddAfter) still is a retry delay someone chose.
			s.recordRetry(e.Key, Retry{At: e.Time, Delay: e.Delay.D(), By: chooserOf(e.Kind), Failures: e.Failures})
		}
	}
	if !s.queueAdd(e) {
		return
	}
	p := s.pendingFor(e.Key)
	if p.get != nil {
		if p.next == nil {
			p.next = &pendingWork{}
		}
		p = p.next
	}
	p.addCount++
	if len(p.adds) < s.limits.AddsPerReconcile {
		p.adds = append(p.adds, e)
	}
	if e.Cause != 0 {
		if w, ok := s.watches[e.Cause]; ok && w.Key == e.Key {
			// The watched object is the reconciled object: show it in the
			// objects pane even before its first reconcile (e.g. while paused).
			s.ensureObject(e.Key, w.Object, w.Time).observeWatch(w)
		}
	}
}

func (s *State) onQueueGet(e observe.Event) {
	s.queueGet(e)
	get := e
	s.pendingFor(e.Key).get = &get
}

func (s *State) onQueueForget(e observe.Event) {
	if r, ok := s.outcomeOf(e); ok {
		r.Outcome = append(r.Outcome, e)
	}
	if q, ok := s.queue[e.Key]; ok {
		q.Failures = 0
	}
}

func (s *State) onQueueDone(e observe.Event) {
	if r, ok := s.active[e.Key]; ok && r.End != nil {
		s.closeReconcile(r)
	}
	if !s.queueDone(e) {
		delete(s.pending, e.Key)
	}
}

// Dequeued is a key a worker took from the queue whose reconcile has not
// started yet: a paused step-through gate holds it there.
type Dequeued struct {
	Key      string
	Trigger  *observe.Event
	Adds     []observe.Event
	AddCount int
	Get      observe.Event
}

// Dequeued lists the keys waiting between dequeue and reconcile start,
// oldest dequeue first.
func (s *State) Dequeued() []Dequeued {
	var out []Dequeued
	for key, p := range s.pending {
		if p.get == nil {
			continue
		}
		d := Dequeued{Key: key, Adds: p.adds, AddCount: p.addCount, Get: *p.get}
		for _, add := range p.adds {
			if w, ok := s.watches[add.Cause]; ok && add.Cause != 0 {
				d.Trigger = &w
				break
			}
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Get.Seq < out[j].Get.Seq })
	return out
}
