package state

import (
	"sort"
	"time"

	"github.com/operator-lab/lab/observe"
)

// Object is one reconciled object (a HelloWorld, a Database) as the events
// describe it.
type Object struct {
	Key  string
	Kind string
	// FirstSeen is when the first event about the object arrived.
	FirstSeen time.Time

	Phase      string
	PhaseSince time.Time
	// History holds the most recent phase transitions, oldest first.
	History *Ring[PhaseChange]

	Conditions []Condition

	Generation      int64
	ResourceVersion string
	Deleted         bool
	DeletedAt       time.Time

	Reconciles int
	LastResult string
	LastError  string

	order     int
	watchSeen uint64 // seq of the newest watch event applied
}

// PhaseChange is one transition of the state machine.
type PhaseChange struct {
	From, To string
	At       time.Time
	// InFrom is how long the object spent in From (0 when unknown).
	InFrom time.Duration
}

// Condition is the latest status of one condition type.
type Condition struct {
	Type, Status, Reason, Message string
	At                            time.Time
}

// Objects returns the held objects in the order they were first seen.
func (s *State) Objects() []*Object {
	out := make([]*Object, 0, len(s.objects))
	for _, o := range s.objects {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].order < out[j].order })
	return out
}

// Object returns the object with the given key.
func (s *State) Object(key string) (*Object, bool) {
	o, ok := s.objects[key]
	return o, ok
}

// ObjectCount is how many objects are held.
func (s *State) ObjectCount() int { return len(s.objects) }

func (s *State) ensureObject(key, kind string, at time.Time) *Object {
	if o, ok := s.objects[key]; ok {
		if o.Kind == "" {
			o.Kind = kind
		}
		return o
	}
	if len(s.objects) >= s.limits.Objects {
		s.evictObject()
	}
	s.objectCount++
	o := &Object{Key: key, Kind: kind, FirstSeen: at, History: NewRing[PhaseChange](s.limits.PhaseHistory), order: s.objectCount}
	s.objects[key] = o
	return o
}

// evictObject drops the oldest deleted object, or else the oldest object.
func (s *State) evictObject() {
	var victim *Object
	for _, o := range s.objects {
		better := victim == nil ||
			(o.Deleted && !victim.Deleted) ||
			(o.Deleted == victim.Deleted && o.order < victim.order)
		if better {
			victim = o
		}
	}
	if victim != nil {
		delete(s.objects, victim.Key)
	}
}

func (o *Object) observeWatch(e observe.Event) {
	if o.Kind == "" {
		o.Kind = e.Object
	}
	if e.Seq != 0 && e.Seq <= o.watchSeen {
		return
	}
	o.watchSeen = e.Seq
	if e.Generation > 0 {
		o.Generation = e.Generation
	}
	if e.ResourceVersion != "" {
		o.ResourceVersion = e.ResourceVersion
	}
	switch e.WatchType() {
	case observe.WatchDeleted:
		o.Deleted, o.DeletedAt = true, e.Time
	case observe.WatchAdded:
		o.Deleted, o.DeletedAt = false, time.Time{}
	}
}

func (s *State) onPhase(e observe.Event) {
	if e.Key == "" {
		return
	}
	o := s.ensureObject(e.Key, e.Object, e.Time)
	change := PhaseChange{From: e.From, To: e.To, At: e.Time}
	if change.From == "" {
		change.From = o.Phase
	}
	if !o.PhaseSince.IsZero() {
		change.InFrom = e.Time.Sub(o.PhaseSince)
	}
	o.History.Push(change)
	o.Phase, o.PhaseSince = e.To, e.Time
}

func (s *State) onCondition(e observe.Event) {
	cond := e.Condition()
	if e.Key == "" || cond.Type == "" {
		return
	}
	o := s.ensureObject(e.Key, e.Object, e.Time)
	c := Condition{Type: cond.Type, Status: string(cond.Status), Reason: cond.Reason, Message: cond.Message, At: e.Time}
	for i := range o.Conditions {
		if o.Conditions[i].Type == c.Type {
			o.Conditions[i] = c
			return
		}
	}
	o.Conditions = append(o.Conditions, c)
}
