package state

import (
	"maps"
	"slices"
	"sort"
	"time"
)

// Chooser names who picked a retry delay.
type Chooser string

// Who can choose a retry delay.
const (
	// ChosenByRateLimiter: the reconcile returned an error or Requeue: true
	// and the queue's per-item rate limiter picked the delay (AddRateLimited).
	ChosenByRateLimiter Chooser = "rate limiter"
	// ChosenByRequeueAfter: the reconcile returned Result{RequeueAfter: d}.
	ChosenByRequeueAfter Chooser = "RequeueAfter"
	// ChosenByLesson: the lesson's own exponential backoff computed d and
	// returned it as RequeueAfter.
	ChosenByLesson Chooser = "lesson backoff"
)

// Retry is the outcome of one reconcile of a key, as far as retrying goes.
type Retry struct {
	At time.Time
	// Reconcile is the reconcile's number (0 when the delay was chosen outside one).
	Reconcile int
	Result    string
	Error     string
	// Delay is when the queue hands the key out again; 0 when it did not
	// schedule a delayed retry (success, terminal error).
	Delay time.Duration
	By    Chooser
	// Failures is the rate limiter's failure count behind its delay.
	Failures int
	// Attempt is the lesson backoff's attempt number.
	Attempt int
	// LimiterWait: the RequeueAfter is the wait the client-side rate
	// limiter asked for. The controller Forgets the key for any
	// RequeueAfter, so the queue's failure count starts over after it.
	LimiterWait bool
	// RestOfWait: the RequeueAfter waits out the rest of a lesson-backoff
	// delay. The reconcile ran early, woken by a write that kept the
	// generation (the controller's own status write), so it is the same
	// retry as the lesson backoff's row before it, not a new one.
	RestOfWait bool
}

// Series is the recent retry history of one key.
type Series struct {
	Key     string
	Retries *Ring[Retry]
	Updated time.Time
	// Total counts every retry recorded, including those the ring forgot.
	Total int
}

// Series returns the retry history of a key.
func (s *State) Series(key string) (*Series, bool) {
	v, ok := s.series[key]
	return v, ok
}

// AllSeries returns every held series, most recently updated first.
func (s *State) AllSeries() []*Series {
	out := make([]*Series, 0, len(s.series))
	for _, k := range slices.Sorted(maps.Keys(s.series)) {
		out = append(out, s.series[k])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Updated.After(out[j].Updated) })
	return out
}

func (s *State) recordRetry(key string, r Retry) {
	v, ok := s.series[key]
	if !ok {
		if len(s.series) >= s.limits.Keys {
			s.evictSeries()
		}
		v = &Series{Key: key, Retries: NewRing[Retry](s.limits.RetriesPerKey)}
		s.series[key] = v
	}
	v.Retries.Push(r)
	v.Total++
	if r.At.After(v.Updated) {
		v.Updated = r.At
	}
}

// evictSeries drops the series updated longest ago.
func (s *State) evictSeries() {
	var victim *Series
	for _, v := range s.series {
		if victim == nil || v.Updated.Before(victim.Updated) || (v.Updated.Equal(victim.Updated) && v.Key < victim.Key) {
			victim = v
		}
	}
	if victim != nil {
		delete(s.series, victim.Key)
	}
}
