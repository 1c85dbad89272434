package state

import (
	"sort"
	"time"

	"github.com/operator-lab/lab/observe"
)

// QueueState is where an item is in the work queue.
type QueueState string

// Queue states. An item that is not in the queue at all is not held.
const (
	QueueWaiting    QueueState = "waiting"
	QueueProcessing QueueState = "in progress"
	QueueDelayed    QueueState = "delayed"
	// QueueDequeued is an item in progress as the work queue sees it (a
	// worker took it) whose reconcile has not started: a paused
	// step-through gate holds it there. State.ItemState tells it apart;
	// an item's own State says QueueProcessing.
	QueueDequeued QueueState = "dequeued"
)

// QueueItem is one key in the work queue.
type QueueItem struct {
	Key        string
	Controller string
	State      QueueState
	// Since is when the item entered its state.
	Since time.Time
	// ReadyAt is when a delayed item becomes ready; while in progress it is
	// the delayed re-add that takes effect once the worker is done.
	ReadyAt time.Time
	// DelayedBy names who chose the delay.
	DelayedBy Chooser
	// Failures is the rate limiter's failure count for the key (reset by forget).
	Failures int
	// Adds counts the adds merged since the last dequeue: several watch
	// events for one key become one reconcile.
	Adds int
	// Priority is the priority queue's priority of the latest add, if given.
	Priority *int
	// Requeued is set when the key was added again while in progress; the
	// queue hands it out again after Done.
	Requeued bool
}

// StateAt is the item's state at time now: a delayed item whose time has
// come is waiting for a worker.
func (q *QueueItem) StateAt(now time.Time) QueueState {
	if q.State == QueueDelayed && !now.Before(q.ReadyAt) {
		return QueueWaiting
	}
	return q.State
}

// ItemState is where an item is at time now, with an item a worker took
// but whose reconcile has not started (QueueDequeued) told apart from one
// whose reconcile runs (QueueProcessing).
func (s *State) ItemState(q *QueueItem, now time.Time) QueueState {
	st := q.StateAt(now)
	if st == QueueProcessing && s.AwaitingStart(q.Key) {
		return QueueDequeued
	}
	return st
}

// Queue returns the items in the queue: running first, then dequeued
// (held at a paused gate), then waiting (longest first), then delayed
// (soonest first).
func (s *State) Queue(now time.Time) []*QueueItem {
	items := make([]*QueueItem, 0, len(s.queue))
	for _, q := range s.queue {
		items = append(items, q)
	}
	rank := map[QueueState]int{QueueProcessing: 0, QueueDequeued: 1, QueueWaiting: 2, QueueDelayed: 3}
	sort.Slice(items, func(i, j int) bool {
		a, b := items[i], items[j]
		sa, sb := s.ItemState(a, now), s.ItemState(b, now)
		if sa != sb {
			return rank[sa] < rank[sb]
		}
		ta, tb := a.Since, b.Since
		if sa == QueueDelayed {
			ta, tb = a.ReadyAt, b.ReadyAt
		}
		if !ta.Equal(tb) {
			return ta.Before(tb)
		}
		return a.Key < b.Key
	})
	return items
}

// QueueItem returns the queue entry for key, if the key is in the queue.
func (s *State) QueueItem(key string) (*QueueItem, bool) {
	q, ok := s.queue[key]
	return q, ok
}

// QueueCounts counts items by state at time now (ItemState): an item a
// worker took whose reconcile has not started counts as QueueDequeued,
// not as in progress.
func (s *State) QueueCounts(now time.Time) map[QueueState]int {
	counts := map[QueueState]int{}
	for _, q := range s.queue {
		counts[s.ItemState(q, now)]++
	}
	return counts
}

// QueueOverflow counts adds for keys that were not tracked because
// Limits.Keys items were already held.
func (s *State) QueueOverflow() uint64 { return s.queueOverflow }

// queueAdd applies an add of any kind and reports whether the key is tracked.
func (s *State) queueAdd(e observe.Event) bool {
	q, ok := s.queue[e.Key]
	if !ok {
		if len(s.queue) >= s.limits.Keys {
			s.queueOverflow++
			return false
		}
		q = &QueueItem{Key: e.Key, Controller: e.Controller}
		s.queue[e.Key] = q
	}
	q.Adds++
	if e.Priority != nil {
		p := *e.Priority
		q.Priority = &p
	}
	if e.Kind == observe.KindQueueAddRateLimited {
		q.Failures = e.Failures
	}
	delay := e.Delay.D()
	if e.Kind == observe.KindQueueAdd || delay <= 0 {
		switch q.State {
		case QueueProcessing:
			q.Requeued = true
		case QueueWaiting:
		default: // new, or delayed: an immediate add makes it ready now
			q.State, q.Since, q.ReadyAt, q.DelayedBy = QueueWaiting, e.Time, time.Time{}, ""
		}
		return true
	}
	readyAt := e.Time.Add(delay)
	switch q.State {
	case QueueWaiting:
		// Already ready: the queue keeps the earliest time.
	case QueueProcessing, QueueDelayed:
		if q.ReadyAt.IsZero() || readyAt.Before(q.ReadyAt) {
			q.ReadyAt, q.DelayedBy = readyAt, chooserOf(e.Kind)
		}
	default:
		q.State, q.Since, q.ReadyAt, q.DelayedBy = QueueDelayed, e.Time, readyAt, chooserOf(e.Kind)
	}
	return true
}

func (s *State) queueGet(e observe.Event) {
	q, ok := s.queue[e.Key]
	if !ok {
		if len(s.queue) >= s.limits.Keys {
			s.queueOverflow++
			return
		}
		q = &QueueItem{Key: e.Key, Controller: e.Controller}
		s.queue[e.Key] = q
	}
	q.State, q.Since, q.ReadyAt, q.DelayedBy, q.Requeued, q.Adds = QueueProcessing, e.Time, time.Time{}, "", false, 0
	if e.Priority != nil {
		p := *e.Priority
		q.Priority = &p
	}
}

// queueDone applies a Done and reports whether the key is still queued.
func (s *State) queueDone(e observe.Event) bool {
	q, ok := s.queue[e.Key]
	if !ok {
		return false
	}
	switch {
	case q.State != QueueProcessing:
		return true
	case q.Requeued:
		q.State, q.Since, q.ReadyAt, q.DelayedBy = QueueWaiting, e.Time, time.Time{}, ""
	case !q.ReadyAt.IsZero():
		q.State, q.Since = QueueDelayed, e.Time
	default:
		delete(s.queue, e.Key)
		return false
	}
	q.Requeued = false
	return true
}

// AwaitingStart reports whether a worker has dequeued key but its reconcile
// has not started yet — where a paused step-through gate holds it.
func (s *State) AwaitingStart(key string) bool {
	p, ok := s.pending[key]
	return ok && p.get != nil
}
