package observe

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultBuffer is a subscription buffer size that absorbs the bursts a
// controller produces (an initial list, an update storm) without drops for a
// reader that keeps up on average.
const DefaultBuffer = 4096

// Bus stamps events and fans them out to subscribers. Emit never blocks: each
// subscriber has a bounded buffer, and an event that does not fit is dropped
// for that subscriber and counted, so a slow reader (a terminal, a file on a
// slow disk) can never stall a reconcile.
//
// Events are delivered to every subscriber in Seq order: stamping and
// delivery happen under one mutex, so a trace read from any subscriber has
// strictly increasing Seq and non-decreasing Time.
type Bus struct {
	// mu serialises stamping with delivery (for ordering) and guards subs and
	// closed, so a subscription's channel is never sent on after it is closed.
	mu      sync.Mutex
	lastSeq atomic.Uint64
	subs    []*Subscription
	sinks   []*Recorder
	closed  bool
}

// NewBus returns a bus with no subscribers.
func NewBus() *Bus {
	return &Bus{}
}

// Emit stamps e with the schema version, the next sequence number and, if
// e.Time is zero, the current time, then offers it to every subscriber.
func (b *Bus) Emit(e Event) {
	b.EmitSeq(e)
}

// EmitSeq is Emit returning the sequence number given to the event, so a
// caller can make later events point at it (Event.Cause).
func (b *Bus) EmitSeq(e Event) uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	e.V = SchemaVersion
	e.Seq = b.lastSeq.Add(1)
	if e.Time.IsZero() {
		// UTC drops the monotonic reading, so an event read back from JSON
		// compares equal to the one that was written.
		e.Time = time.Now().UTC()
	}
	if b.closed {
		return e.Seq
	}
	for _, s := range b.subs {
		select {
		case s.c <- e:
		default:
			s.dropped.Add(1)
		}
	}
	for _, r := range b.sinks {
		r.add(e)
	}
	return e.Seq
}

// LastSeq is the sequence number of the most recent event (0 before any).
func (b *Bus) LastSeq() uint64 { return b.lastSeq.Load() }

// Subscribe returns a subscription whose channel holds up to buffer events
// (DefaultBuffer if buffer <= 0). Events emitted while the buffer is full are
// dropped for this subscription and counted by Dropped. On a closed bus the
// returned subscription's channel is already closed.
func (b *Bus) Subscribe(buffer int) *Subscription {
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	ch := make(chan Event, buffer)
	s := &Subscription{C: ch, c: ch, bus: b}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		s.closed = true
		close(ch)
		return s
	}
	b.subs = append(b.subs, s)
	return s
}

// Close closes every subscription's channel (readers see the end of the
// stream) and stops delivery. Emit keeps working, and goes nowhere.
func (b *Bus) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	for _, s := range b.subs {
		s.closed = true
		close(s.c)
	}
	b.subs = nil
	for _, r := range b.sinks {
		r.markClosed()
	}
	b.sinks = nil
}

// Subscription is one reader's view of a Bus.
type Subscription struct {
	// C receives events in Seq order. It is closed by Close or Bus.Close.
	C <-chan Event

	c       chan Event
	bus     *Bus
	dropped atomic.Uint64
	closed  bool // guarded by bus.mu
}

// Dropped is how many events did not fit into this subscription's buffer.
func (s *Subscription) Dropped() uint64 { return s.dropped.Load() }

// Close stops delivery and closes C. Safe to call more than once and
// concurrently with Emit.
func (s *Subscription) Close() {
	b := s.bus
	b.mu.Lock()
	defer b.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	for i, other := range b.subs {
		if other == s {
			b.subs = append(b.subs[:i:i], b.subs[i+1:]...)
			break
		}
	}
	close(s.c)
}

// Recorder keeps every event emitted on a bus, for tests and summaries. It is
// fed synchronously by Emit (an append under a mutex), so it never drops and
// an event is visible in Events as soon as Emit returns.
type Recorder struct {
	bus *Bus

	mu     sync.Mutex
	events []Event
	closed bool
	// changed is closed and replaced whenever events grow or the recorder
	// closes, waking every WaitFor.
	changed chan struct{}
}

// NewRecorder starts recording everything b emits from now on.
func NewRecorder(b *Bus) *Recorder {
	r := &Recorder{bus: b, changed: make(chan struct{})}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		r.closed = true
		return r
	}
	b.sinks = append(b.sinks, r)
	return r
}

func (r *Recorder) add(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

func (r *Recorder) markClosed() {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		close(r.changed)
		r.changed = make(chan struct{})
	}
	r.mu.Unlock()
}

// Events returns a copy of the events recorded so far, in Seq order.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// WaitFor calls done with the events recorded so far, again after every new
// event, until it returns true (nil) or ctx ends (an error saying how many
// events were seen). done must not modify the slice it is given.
func (r *Recorder) WaitFor(ctx context.Context, done func([]Event) bool) error {
	for {
		r.mu.Lock()
		// Recorded events are never changed, only appended to, so a capped
		// view is a stable snapshot without copying a long trace on every event.
		snapshot := r.events[:len(r.events):len(r.events)]
		changed := r.changed
		closed := r.closed
		r.mu.Unlock()

		if done(snapshot) {
			return nil
		}
		if closed {
			return fmt.Errorf("recorder closed before the awaited events arrived (saw %d events)", len(snapshot))
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("waiting for events (saw %d): %w", len(snapshot), context.Cause(ctx))
		}
	}
}

// Close stops recording; Events keeps returning what was recorded.
func (r *Recorder) Close() {
	b := r.bus
	b.mu.Lock()
	for i, other := range b.sinks {
		if other == r {
			b.sinks = append(b.sinks[:i:i], b.sinks[i+1:]...)
			break
		}
	}
	b.mu.Unlock()
	r.markClosed()
}

// SeqEmitter is an Emitter that tells the caller which sequence number an
// event got. Handler needs it to link queue adds to the watch event that
// caused them; with a plain Emitter the links are left out.
type SeqEmitter interface {
	Emitter
	EmitSeq(Event) uint64
}

var _ SeqEmitter = (*Bus)(nil)
