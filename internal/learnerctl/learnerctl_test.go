package learnerctl

import (
	"bytes"
	"testing"

	"github.com/operator-lab/lab/operator/observe"
)

// TestForwardRenumbersCauses: events from the program get lab's own
// sequence numbers, and a queue add still points at the watch event that
// caused it; lines that are not events are kept as output, not forwarded.
func TestForwardRenumbersCauses(t *testing.T) {
	var in bytes.Buffer
	enc := observe.NewEncoder(&in)
	for _, e := range []observe.Event{
		{V: observe.SchemaVersion, Seq: 40, Kind: observe.KindWatch, Key: "ns/a"},
		{V: observe.SchemaVersion, Seq: 41, Kind: observe.KindQueueAdd, Key: "ns/a", Cause: 40},
		{V: observe.SchemaVersion, Seq: 42, Kind: observe.KindGate, Value: observe.GateWaiting, Key: "ns/a"},
	} {
		if err := enc.Encode(e); err != nil {
			t.Fatal(err)
		}
	}
	in.WriteString("debug: this is not an event\n")

	bus := observe.NewBus()
	bus.Emit(observe.Event{Kind: observe.KindScenario}) // lab's own event takes seq 1
	rec := observe.NewRecorder(bus)
	p := &Process{bus: bus}
	p.forward(&in)
	got := rec.Events()
	if len(got) != 3 {
		t.Fatalf("forwarded %d events, want 3: %+v", len(got), got)
	}
	watch, add := got[0], got[1]
	if watch.Seq != 2 || add.Cause != watch.Seq {
		t.Errorf("watch seq %d, add cause %d: the add must point at the watch's new number", watch.Seq, add.Cause)
	}
	if p.Waiting() != 1 {
		t.Errorf("waiting = %d after a gate waiting event, want 1", p.Waiting())
	}
	if out := p.Output(); len(out) != 1 {
		t.Errorf("output kept: %q, want the one line that was not an event", out)
	}
}

func TestForgetOldKeepsTheMapBounded(t *testing.T) {
	m := map[uint64]uint64{}
	for own := uint64(1); own <= 3*causeMemory; own++ {
		m[own] = own
		forgetOld(m, own)
	}
	if len(m) > causeMemory+1 {
		t.Errorf("%d numbers remembered, want at most %d", len(m), causeMemory+1)
	}
	if _, ok := m[3*causeMemory]; !ok {
		t.Error("the newest number was forgotten")
	}
}

func TestParseSwitch(t *testing.T) {
	sw := parseSwitch("external=healthy,down,flaky")
	if sw.Name != "external" || len(sw.Values) != 3 || sw.Values[2] != "flaky" {
		t.Errorf("parsed %+v", sw)
	}
	if sw := parseSwitch(""); sw.Name != "" {
		t.Errorf("an empty announcement parsed as %+v", sw)
	}
}
