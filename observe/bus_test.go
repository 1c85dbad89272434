package observe

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestBusStampsAndOrders(t *testing.T) {
	b := NewBus()
	sub := b.Subscribe(10)
	defer sub.Close()

	given := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	b.Emit(Event{Kind: KindQueueAdd, Key: "ns/a"})
	b.Emit(Event{Kind: KindQueueGet, Key: "ns/a", Time: given, V: 99, Seq: 12345})

	first, second := <-sub.C, <-sub.C
	if first.V != SchemaVersion || second.V != SchemaVersion {
		t.Errorf("schema versions = %d, %d; want %d (Emit must overwrite what the caller set)", first.V, second.V, SchemaVersion)
	}
	if first.Seq != 1 || second.Seq != 2 {
		t.Errorf("seqs = %d, %d; want 1, 2 (Emit must assign its own)", first.Seq, second.Seq)
	}
	if first.Time.IsZero() {
		t.Error("Emit left Time zero")
	}
	if !second.Time.Equal(given) {
		t.Errorf("Emit replaced a caller-set Time: got %v, want %v", second.Time, given)
	}
	if b.LastSeq() != 2 {
		t.Errorf("LastSeq = %d, want 2", b.LastSeq())
	}
}

func TestBusFansOutToEverySubscriber(t *testing.T) {
	b := NewBus()
	subs := []*Subscription{b.Subscribe(5), b.Subscribe(5), b.Subscribe(5)}
	for i := 0; i < 5; i++ {
		b.Emit(Event{Kind: KindQueueAdd})
	}
	for n, s := range subs {
		for want := uint64(1); want <= 5; want++ {
			if got := (<-s.C).Seq; got != want {
				t.Fatalf("subscriber %d: got seq %d, want %d", n, got, want)
			}
		}
		if s.Dropped() != 0 {
			t.Errorf("subscriber %d dropped %d events with room to spare", n, s.Dropped())
		}
	}
}

func TestBusDropsForFullSubscriberOnly(t *testing.T) {
	b := NewBus()
	small := b.Subscribe(2)
	big := b.Subscribe(100)
	for i := 0; i < 10; i++ {
		b.Emit(Event{Kind: KindQueueAdd})
	}
	if got := small.Dropped(); got != 8 {
		t.Errorf("small subscriber dropped %d, want 8", got)
	}
	if got := big.Dropped(); got != 0 {
		t.Errorf("big subscriber dropped %d, want 0", got)
	}
	// The small subscriber keeps the oldest events: drops happen at the tail.
	if got := (<-small.C).Seq; got != 1 {
		t.Errorf("small subscriber's first event has seq %d, want 1", got)
	}
}

// A subscriber that never reads must not slow the emitter down: Emit returns
// for every one of 100k events and the losses are counted exactly.
func TestBusFloodNeverBlocks(t *testing.T) {
	const total = 100_000
	b := NewBus()
	stuck := b.Subscribe(16)
	defer stuck.Close()

	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < total; i++ {
			b.Emit(Event{Kind: KindReconcileStart})
		}
	}()
	<-done // would hang (and the test time out) if Emit blocked
	if got := stuck.Dropped(); got != total-16 {
		t.Errorf("Dropped = %d, want %d", got, total-16)
	}
	if len(stuck.C) != 16 {
		t.Errorf("buffer holds %d events, want 16", len(stuck.C))
	}
}

// Run with -race: subscribing, emitting and closing concurrently must neither
// race nor send on a closed channel (which would panic).
func TestBusConcurrentSubscribeEmitClose(t *testing.T) {
	b := NewBus()
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				b.Emit(Event{Kind: KindQueueAdd})
			}
		}()
	}
	for s := 0; s < 4; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				sub := b.Subscribe(4)
				select {
				case <-sub.C:
				default:
				}
				sub.Close()
				sub.Close() // idempotent
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		r := NewRecorder(b)
		r.Close()
	}()
	wg.Wait()
	b.Close()
	b.Emit(Event{Kind: KindQueueAdd}) // after Close: goes nowhere, must not panic
	if b.LastSeq() != 8001 {
		t.Errorf("LastSeq = %d, want 8001", b.LastSeq())
	}
}

func TestBusCloseEndsSubscriptions(t *testing.T) {
	b := NewBus()
	sub := b.Subscribe(4)
	b.Emit(Event{Kind: KindQueueAdd})
	b.Close()
	if _, ok := <-sub.C; !ok {
		t.Fatal("buffered event lost at Close")
	}
	if _, ok := <-sub.C; ok {
		t.Fatal("channel still open after Bus.Close")
	}
	sub.Close() // after Bus.Close: must not double-close
	late := b.Subscribe(1)
	if _, ok := <-late.C; ok {
		t.Fatal("subscription to a closed bus got an open channel")
	}
}

func TestRecorderWaitFor(t *testing.T) {
	b := NewBus()
	r := NewRecorder(b)
	defer r.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		for i := 0; i < 3; i++ {
			b.Emit(Event{Kind: KindQueueAdd})
		}
		b.Emit(Event{Kind: KindQueueGet})
	}()
	err := r.WaitFor(ctx, func(events []Event) bool {
		return len(events) > 0 && events[len(events)-1].Kind == KindQueueGet
	})
	if err != nil {
		t.Fatal(err)
	}
	events := r.Events()
	if len(events) != 4 {
		t.Fatalf("recorded %d events, want 4", len(events))
	}
	for i, e := range events {
		if e.Seq != uint64(i+1) {
			t.Errorf("event %d has seq %d, want %d", i, e.Seq, i+1)
		}
	}
}

func TestRecorderWaitForGivesUpWithContext(t *testing.T) {
	b := NewBus()
	r := NewRecorder(b)
	b.Emit(Event{Kind: KindQueueAdd})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := r.WaitFor(ctx, func([]Event) bool { return false })
	if err == nil {
		t.Fatal("WaitFor returned nil for a predicate that is never true")
	}
	if want := "saw 1"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say how many events were seen (%q)", err, want)
	}
	r.Close()
	b.Emit(Event{Kind: KindQueueAdd})
	if len(r.Events()) != 1 {
		t.Errorf("recorder kept recording after Close: %d events", len(r.Events()))
	}
	if err := r.WaitFor(context.Background(), func([]Event) bool { return false }); err == nil {
		t.Error("WaitFor on a closed recorder should fail rather than wait forever")
	}
}
