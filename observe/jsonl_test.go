package observe

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// sampleEvents uses every field at least once, with values that need
// escaping, so a field dropped or mangled by the codec shows up.
func sampleEvents() []Event {
	priority := -100
	b := NewBus()
	r := NewRecorder(b)
	defer r.Close()
	for _, e := range []Event{
		{Kind: KindWatch, Controller: "hello", Key: "ns/a", Type: WatchAdded, Object: "ConfigMap", ResourceVersion: "17", Generation: 3},
		{Kind: KindQueueAdd, Controller: "hello", Key: "ns/a", Cause: 1, Priority: &priority},
		{Kind: KindQueueAddRateLimited, Key: "ns/a", Delay: Duration(5 * time.Millisecond), Failures: 2},
		{Kind: KindReconcileEnd, Key: "ns/a", ReconcileID: "3f1c", Result: ResultError, RequeueAfter: Duration(time.Hour),
			Error: `external "db" <down> & unreachable` + "\n", DurationMs: 12.5},
		{Kind: KindClient, Verb: "status.update", Object: "Database", Name: "a", Source: SourceAPI, Outcome: OutcomeConflict},
		{Kind: KindPhase, From: "Pending", To: "Provisioning"},
		{Kind: KindCondition, Type: "Ready", Status: "False", Reason: "ExternalDown", Message: "дб недоступна"},
		{Kind: KindBackoff, Attempt: 4, Delay: Duration(40 * time.Second)},
		{Kind: KindRateLimit, Wait: Duration(1500 * time.Millisecond)},
		{Kind: KindExternal, Op: "health", Outcome: OutcomeOK, LatencyMs: 0.25},
		{Kind: KindSwitch, Name: "requeue", Value: "after"},
		RunnerReadyEvent(Switch{Name: "external", Values: []string{"healthy", "down"}}, "healthy"),
	} {
		b.Emit(e)
	}
	return r.Events()
}

func TestJSONLinesRoundTrip(t *testing.T) {
	want := sampleEvents()
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	for _, e := range want {
		if err := enc.Encode(e); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("wrote %d lines for %d events:\n%s", len(lines), len(want), buf.String())
	}
	for i, line := range lines {
		if !strings.HasPrefix(line, `{"v":1,"seq":`) {
			t.Errorf("line %d does not start with the schema version and seq: %s", i+1, line)
		}
	}
	if !strings.Contains(lines[3], `<down> & unreachable\n`) {
		t.Errorf("error text escaped for HTML or newline not escaped: %s", lines[3])
	}
	if !strings.Contains(lines[2], `"delay":"5ms"`) {
		t.Errorf("durations should be written as text: %s", lines[2])
	}

	got, err := ReadAll(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip changed events:\n got %+v\nwant %+v", got, want)
	}
}

func TestDecoderSkipsBlankLinesAndToleratesNoFinalNewline(t *testing.T) {
	in := "\n" + `{"v":1,"seq":1,"time":"2026-01-02T03:04:05Z","kind":"queue.add"}` + "\n\n  \n" +
		`{"v":1,"seq":2,"time":"2026-01-02T03:04:05Z","kind":"queue.get","future":"ignored","delay":5000000}`
	events, err := ReadAll(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || events[1].Kind != KindQueueGet {
		t.Fatalf("got %+v", events)
	}
	if events[1].Delay.D() != 5*time.Millisecond {
		t.Errorf("numeric delay decoded as %v, want 5ms", events[1].Delay)
	}
}

func TestDecoderErrorsNameLineAndProblem(t *testing.T) {
	ok := `{"v":1,"seq":1,"time":"2026-01-02T03:04:05Z","kind":"queue.add"}`
	for _, tc := range []struct {
		name, bad string
		want      []string
	}{
		{"broken JSON", `{"v":1,"kind":`, []string{"line 3:", "invalid JSON"}},
		{"not an object", `[1,2]`, []string{"line 3:", "expected a JSON object", "array"}},
		{"wrong field type", `{"v":1,"kind":"queue.add","seq":"seven"}`, []string{"line 3:", `field "seq"`, "string"}},
		{"missing version", `{"seq":1,"kind":"queue.add"}`, []string{"line 3:", `"v"`}},
		{"newer version", `{"v":7,"seq":1,"kind":"queue.add"}`, []string{"line 3:", "schema version 7", "upgrade"}},
		{"missing kind", `{"v":1,"seq":1}`, []string{"line 3:", `"kind"`}},
		{"bad duration", `{"v":1,"seq":1,"kind":"queue.add_after","delay":"soon"}`, []string{"line 3:", `field "delay"`, `"soon"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Line 2 is blank: line numbers count lines, not events.
			events, err := ReadAll(strings.NewReader(ok + "\n\n" + tc.bad + "\n" + ok + "\n"))
			if err == nil {
				t.Fatalf("no error for %s", tc.bad)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if len(events) != 1 {
				t.Errorf("ReadAll returned %d events before the bad line, want 1", len(events))
			}
		})
	}
}

func TestDecoderEOF(t *testing.T) {
	d := NewDecoder(strings.NewReader(""))
	if _, err := d.Decode(); !errors.Is(err, io.EOF) {
		t.Fatalf("empty input: got %v, want io.EOF", err)
	}
}

// Concurrent Encode calls must produce whole lines, never interleaved ones.
func TestEncoderConcurrentLinesStayWhole(t *testing.T) {
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	long := strings.Repeat("x", 4096)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if err := enc.Encode(Event{V: 1, Kind: KindExternal, Message: long}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	events, err := ReadAll(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 400 {
		t.Fatalf("decoded %d events, want 400", len(events))
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestEncoderReportsWriteErrors(t *testing.T) {
	err := NewEncoder(failingWriter{}).Encode(Event{Kind: KindQueueAdd, Seq: 4})
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "queue.add event 4") {
		t.Fatalf("got %v, want an error naming the event and the cause", err)
	}
}
