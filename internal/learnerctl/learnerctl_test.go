package learnerctl

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/labs/runkit"
	"github.com/operator-lab/lab/observe"
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
	if out := p.Output(); len(out) != 1 || out[0] != "debug: this is not an event" {
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

// fakeProgram writes a shell script standing in for a runner.
func fakeProgram(t *testing.T, script string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "runner")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func start(t *testing.T, script string, timeout time.Duration, echo io.Writer) (*Process, error) {
	t.Helper()
	return Start(context.Background(), Options{Program: fakeProgram(t, script), Namespace: "ns",
		Bus: observe.NewBus(), ReadyTimeout: timeout, Output: echo})
}

// TestStartReportsAnEarlyExit: a program that dies before it is ready
// gives an error carrying what it printed.
func TestStartReportsAnEarlyExit(t *testing.T) {
	_, err := start(t, `echo "runner: watch Greeting: no matches for kind" >&2; exit 3`, time.Minute, nil)
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "no matches for kind") {
		t.Fatalf("Start: %v", err)
	}
}

// TestStartGivesUpOnAProgramThatNeverGetsReady: a silent program is
// stopped after the ready timeout, with an error that says so.
func TestStartGivesUpOnAProgramThatNeverGetsReady(t *testing.T) {
	_, err := start(t, `echo "still connecting" >&2; exec sleep 60`, 300*time.Millisecond, nil)
	if err == nil || !strings.Contains(err.Error(), "did not start within 300ms") || !strings.Contains(err.Error(), "still connecting") {
		t.Fatalf("Start: %v", err)
	}
}

// TestLongLinesAndRepeatedReadyLines: a 2 MB line does not stop lab from
// reading the program's output (or the program would block on a full
// pipe), a second ready line is harmless, the learner's lines are echoed,
// and closing the input stops the program cleanly.
func TestLongLinesAndRepeatedReadyLines(t *testing.T) {
	var echo labtest.SyncBuffer
	script := `head -c 2000000 /dev/zero | tr '\0' x >&2; echo >&2
echo "` + runkit.ReadyLine + ` external=up,down" >&2
echo "` + runkit.ReadyLine + ` external=up,down" >&2
head -c 200000 /dev/zero | tr '\0' y >&2; echo >&2
echo "hello from your code" >&2
cat >/dev/null`
	p, err := start(t, script, time.Minute, &echo)
	if err != nil {
		t.Fatal(err)
	}
	if sw, value := p.Switch(); sw.Name != "external" || value != "up" {
		t.Errorf("switch %+v = %q", sw, value)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(echo.String(), "your controller: hello from your code") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(echo.String(), "your controller: hello from your code") {
		t.Fatalf("the line after the long ones never arrived; echoed %d bytes", len(echo.String()))
	}
	if err := p.Stop(); err != nil {
		t.Errorf("Stop: %v (closing the input should have stopped it)", err)
	}
	for _, line := range p.Output() {
		if len(line) > maxLine {
			t.Errorf("kept a line of %d bytes", len(line))
		}
	}
}

// TestStopKillsAProgramThatIgnoresItsInput: past the grace period the
// program's whole process group is killed, and Stop says so.
func TestStopKillsAProgramThatIgnoresItsInput(t *testing.T) {
	defer func(old time.Duration) { stopGrace = old }(stopGrace)
	stopGrace = 200 * time.Millisecond
	p, err := start(t, `echo "`+runkit.ReadyLine+` external=up" >&2; sleep 60 & wait`, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(); err == nil || !strings.Contains(err.Error(), "killed it") {
		t.Errorf("Stop: %v, want it to say it killed the program", err)
	}
	select {
	case <-p.Exited():
	default:
		t.Error("Stop returned before the program ended")
	}
}
