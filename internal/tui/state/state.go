package state

import (
	"time"

	"github.com/operator-lab/lab/observe"
)

// Limits bounds every history a State keeps.
type Limits struct {
	Reconciles        int // reconcile sequences kept
	StepsPerReconcile int // client, phase, condition, ... events kept per reconcile
	AddsPerReconcile  int // queue adds kept per reconcile (the rest are only counted)
	Watches           int // watch events kept so queue adds can name their cause
	Objects           int // objects kept (deleted ones are dropped first)
	PhaseHistory      int // phase transitions kept per object
	Keys              int // queue items and retry series kept
	RetriesPerKey     int // reconcile outcomes kept per retry series
	Transitions       int // breaker transitions kept
	ExternalCalls     int // external-system calls kept
	RateLimitWaits    int // rate-limiter waits kept
	Log               int // most recent raw events kept
}

// DefaultLimits are sized for a screen, not an archive: a few hundred
// reconciles is far more than any pane shows.
func DefaultLimits() Limits {
	return Limits{
		Reconciles:        256,
		StepsPerReconcile: 48,
		AddsPerReconcile:  8,
		Watches:           512,
		Objects:           256,
		PhaseHistory:      24,
		Keys:              256,
		RetriesPerKey:     16,
		Transitions:       16,
		ExternalCalls:     48,
		RateLimitWaits:    32,
		Log:               512,
	}
}

// State is the projection of an event stream. It is not safe for concurrent
// use: the TUI folds events in its Update loop, one goroutine.
type State struct {
	limits Limits

	reconciles *Ring[*Reconcile]
	byID       map[string]*Reconcile
	active     map[string]*Reconcile // by key: started, Done not seen yet
	pending    map[string]*pendingWork
	numbered   int

	watchSeqs *Ring[uint64]
	watches   map[uint64]observe.Event
	// sameGeneration holds the held MODIFIED events of an object whose
	// generation the last watch event of that object already had: a write
	// of status or metadata, not of the spec. lastGeneration is per key.
	sameGeneration map[uint64]bool
	lastGeneration map[string]int64

	queue         map[string]*QueueItem
	queueOverflow uint64

	objects     map[string]*Object
	objectCount int

	series map[string]*Series

	breaker   Breaker
	rateLimit RateLimit
	external  External
	gate      Gate

	switches    map[string]string
	switchOrder []string
	scenario    observe.Event

	log    *Ring[observe.Event]
	totals Totals
	last   time.Time
}

// Totals counts everything folded so far, including what the rings forgot.
type Totals struct {
	Events     uint64
	ByKind     map[observe.Kind]uint64
	ByResult   map[string]uint64
	Reconciles uint64
}

// pendingWork is what happened to a key in the queue before its next
// reconcile starts: the adds that were merged and the dequeue.
type pendingWork struct {
	adds     []observe.Event
	addCount int
	get      *observe.Event
	// next collects adds that arrive after the dequeue but before the
	// reconcile starts: they belong to the reconcile after this one.
	next *pendingWork
}

// New returns an empty State with the given limits; zero fields take the defaults.
func New(limits Limits) *State {
	limits = limits.withDefaults()
	return &State{
		limits:         limits,
		reconciles:     NewRing[*Reconcile](limits.Reconciles),
		byID:           map[string]*Reconcile{},
		active:         map[string]*Reconcile{},
		pending:        map[string]*pendingWork{},
		watchSeqs:      NewRing[uint64](limits.Watches),
		watches:        map[uint64]observe.Event{},
		sameGeneration: map[uint64]bool{},
		lastGeneration: map[string]int64{},
		queue:          map[string]*QueueItem{},
		objects:        map[string]*Object{},
		series:         map[string]*Series{},
		breaker:        Breaker{State: BreakerClosed, History: NewRing[BreakerChange](limits.Transitions)},
		rateLimit:      RateLimit{Waits: NewRing[time.Duration](limits.RateLimitWaits)},
		external:       External{Calls: NewRing[ExternalCall](limits.ExternalCalls)},
		switches:       map[string]string{},
		log:            NewRing[observe.Event](limits.Log),
		totals:         Totals{ByKind: map[observe.Kind]uint64{}, ByResult: map[string]uint64{}},
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	pick := func(v, def int) int {
		if v > 0 {
			return v
		}
		return def
	}
	return Limits{
		Reconciles:        pick(l.Reconciles, d.Reconciles),
		StepsPerReconcile: pick(l.StepsPerReconcile, d.StepsPerReconcile),
		AddsPerReconcile:  pick(l.AddsPerReconcile, d.AddsPerReconcile),
		Watches:           pick(l.Watches, d.Watches),
		Objects:           pick(l.Objects, d.Objects),
		PhaseHistory:      pick(l.PhaseHistory, d.PhaseHistory),
		Keys:              pick(l.Keys, d.Keys),
		RetriesPerKey:     pick(l.RetriesPerKey, d.RetriesPerKey),
		Transitions:       pick(l.Transitions, d.Transitions),
		ExternalCalls:     pick(l.ExternalCalls, d.ExternalCalls),
		RateLimitWaits:    pick(l.RateLimitWaits, d.RateLimitWaits),
		Log:               pick(l.Log, d.Log),
	}
}

// Limits reports the bounds this State was built with.
func (s *State) Limits() Limits { return s.limits }

// Apply folds a batch of events, in order.
func (s *State) Apply(events ...observe.Event) {
	for i := range events {
		s.apply(events[i])
	}
}

func (s *State) apply(e observe.Event) {
	s.totals.Events++
	s.totals.ByKind[e.Kind]++
	s.log.Push(e)
	if e.Time.After(s.last) {
		s.last = e.Time
	}
	switch e.Kind {
	case observe.KindWatch:
		s.onWatch(e)
	case observe.KindQueueAdd, observe.KindQueueAddAfter, observe.KindQueueAddRateLimited:
		s.onQueueAdd(e)
	case observe.KindQueueGet:
		s.onQueueGet(e)
	case observe.KindQueueDone:
		s.onQueueDone(e)
	case observe.KindQueueForget:
		s.onQueueForget(e)
	case observe.KindReconcileStart:
		s.onReconcileStart(e)
	case observe.KindReconcileEnd:
		s.onReconcileEnd(e)
	case observe.KindPhase:
		s.onPhase(e)
	case observe.KindCondition:
		s.onCondition(e)
	case observe.KindBreaker:
		s.onBreaker(e)
	case observe.KindRateLimit:
		s.onRateLimit(e)
	case observe.KindExternal:
		s.onExternal(e)
	case observe.KindSwitch:
		name, value := e.Switch()
		s.setSwitch(name, value)
	case observe.KindRunnerReady:
		sw, value := e.RunnerReady()
		s.setSwitch(sw.Name, value)
	case observe.KindGate:
		s.onGate(e)
	case observe.KindScenario:
		s.scenario = e
	}
	// Everything a reconcile does carries its ReconcileID; file it under
	// that reconcile so the sequence pane can draw it.
	if e.ReconcileID != "" && e.Kind != observe.KindReconcileStart && e.Kind != observe.KindReconcileEnd {
		if r, ok := s.byID[e.ReconcileID]; ok {
			r.addStep(e, s.limits.StepsPerReconcile)
		}
	}
}

// LastTime is the time of the newest event folded.
func (s *State) LastTime() time.Time { return s.last }

// Totals returns the running counts.
func (s *State) Totals() Totals { return s.totals }

// Log returns the most recent events, oldest first.
func (s *State) Log() []observe.Event { return s.log.Slice() }

// LogLen is how many recent events are held.
func (s *State) LogLen() int { return s.log.Len() }

// Watch returns the watch event with the given seq if it is still held.
func (s *State) Watch(seq uint64) (observe.Event, bool) {
	e, ok := s.watches[seq]
	return e, ok
}

// Switches returns the switch values seen in switch events (and the one a
// learner's runner announces when it is ready), in the order they were
// first seen.
func (s *State) Switches() (names []string, values map[string]string) {
	return append([]string(nil), s.switchOrder...), s.switches
}

// Scenario returns the most recent scenario event (zero Kind if none).
func (s *State) Scenario() observe.Event { return s.scenario }

func (s *State) onWatch(e observe.Event) {
	if evicted, ok := s.watchSeqs.Push(e.Seq); ok {
		delete(s.watches, evicted)
		delete(s.sameGeneration, evicted)
	}
	s.watches[e.Seq] = e
	if e.Generation > 0 {
		key := e.Object + " " + e.Key
		if e.WatchType() == observe.WatchModified && s.lastGeneration[key] == e.Generation {
			s.sameGeneration[e.Seq] = true
		}
		if len(s.lastGeneration) >= 4*s.limits.Keys {
			clear(s.lastGeneration) // bounded; a forgotten key only loses this note once
		}
		s.lastGeneration[key] = e.Generation
		if e.WatchType() == observe.WatchDeleted {
			delete(s.lastGeneration, key)
		}
	}
	if o, ok := s.objects[e.Key]; ok {
		o.observeWatch(e)
	}
}

func (s *State) setSwitch(name, value string) {
	if name == "" {
		return
	}
	if _, ok := s.switches[name]; !ok {
		s.switchOrder = append(s.switchOrder, name)
	}
	s.switches[name] = value
}
