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
	"github.com/operator-lab/lab/observe"
)

// TestForwardRenumbersCauses: events from the program get lab's own
// sequence numbers, and a queue add still points at the watch event that
// caused it; what the events say of the program (ready, its switch, its
// gate) is noted; lines that are not events are kept as output, not
// forwarded.
func TestForwardRenumbersCauses(t *testing.T) {
	var in bytes.Buffer
	enc := observe.NewEncoder(&in)
	for _, e := range []observe.Event{
		{Seq: 40, Kind: observe.KindWatch, Key: "ns/a"},
		{Seq: 41, Kind: observe.KindQueueAdd, Key: "ns/a", Cause: 40},
		seqd(42, observe.RunnerReadyEvent(observe.Switch{Name: "external", Values: []string{"up", "down"}}, "up")),
		seqd(43, observe.GateEvent(observe.GatePaused, observe.Scope{})),
		seqd(44, observe.GateEvent(observe.GateWaiting, observe.Scope{Key: "ns/a"})),
		seqd(45, observe.SwitchEvent("external", "down")),
	} {
		e.V = observe.SchemaVersion
		if err := enc.Encode(e); err != nil {
			t.Fatal(err)
		}
	}
	in.WriteString("debug: this is not an event\n")

	bus := observe.NewBus()
	bus.Emit(observe.ScenarioEvent(observe.ScenarioStep{Actor: "you"})) // lab's own event takes seq 1
	rec := observe.NewRecorder(bus)
	p := newProcess(bus, nil)
	p.forward(&in)
	got := rec.Events()
	if len(got) != 6 {
		t.Fatalf("forwarded %d events, want 6: %+v", len(got), got)
	}
	watch, add := got[0], got[1]
	if watch.Seq != 2 || add.Cause != watch.Seq {
		t.Errorf("watch seq %d, add cause %d: the add must point at the watch's new number", watch.Seq, add.Cause)
	}
	select {
	case <-p.ready:
	default:
		t.Error("not ready after a runner.ready event")
	}
	if sw, value := p.Switch(); sw.Name != "external" || len(sw.Values) != 2 || value != "down" {
		t.Errorf("switch %+v = %q, want external (up, down) = down, as the switch event after ready says", sw, value)
	}
	if !p.Paused() || p.Waiting() != 1 {
		t.Errorf("paused=%v waiting=%d after paused and waiting events, want true and 1", p.Paused(), p.Waiting())
	}
	if out := p.Output(); len(out) != 1 || out[0] != "debug: this is not an event" {
		t.Errorf("output kept: %q, want the one line that was not an event", out)
	}
}

func seqd(seq uint64, e observe.Event) observe.Event {
	e.Seq = seq
	return e
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
	return startOn(t, observe.NewBus(), script, timeout, echo)
}

func startOn(t *testing.T, bus *observe.Bus, script string, timeout time.Duration, echo io.Writer) (*Process, error) {
	t.Helper()
	return Start(context.Background(), Options{Program: fakeProgram(t, script), Namespace: "ns",
		Bus: bus, ReadyTimeout: timeout, Output: echo})
}

// echoEvent is a shell command writing e to stdout as the runner would.
func echoEvent(t *testing.T, e observe.Event) string {
	t.Helper()
	e.V = observe.SchemaVersion
	var b bytes.Buffer
	if err := observe.NewEncoder(&b).Encode(e); err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(b.String())
	if strings.Contains(line, "'") {
		t.Fatalf("cannot single-quote %s", line)
	}
	return "echo '" + line + "'"
}

// echoReady announces the switch external=up,down on stdout.
func echoReady(t *testing.T) string {
	return echoEvent(t, observe.RunnerReadyEvent(observe.Switch{Name: "external", Values: []string{"up", "down"}}, "up"))
}

// TestReadyComesFromTheEventStream: the runner.ready event on stdout makes
// the program ready, and is forwarded like any event; stderr is the
// learner's own output, so the ready line runners used to write there is
// just a line they printed.
func TestReadyComesFromTheEventStream(t *testing.T) {
	// Were the line still read as ready, Start would return before the
	// program's exit (which waits for its pipes to drain).
	const oldReadyLine = "LAB-RUNNER-READY external=up,down"
	_, err := start(t, `echo "`+oldReadyLine+`" >&2`, time.Minute, nil)
	if err == nil || !strings.Contains(err.Error(), "your controller exited") || !strings.Contains(err.Error(), oldReadyLine) {
		t.Fatalf("Start with a ready line on stderr: %v, want the exit, quoting the line as output", err)
	}

	bus := observe.NewBus()
	rec := observe.NewRecorder(bus)
	p, err := startOn(t, bus, `echo "connecting" >&2; `+echoReady(t)+`; cat >/dev/null`, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Stop() }()
	if sw, value := p.Switch(); sw.Name != "external" || strings.Join(sw.Values, ",") != "up,down" || value != "up" {
		t.Errorf("switch %+v = %q, want the ready event's external (up, down) = up", sw, value)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rec.WaitFor(ctx, func(events []observe.Event) bool { return len(events) > 0 }); err != nil {
		t.Fatalf("the ready event was not forwarded: %v", err)
	}
	if events := rec.Events(); len(events) != 1 || events[0].Kind != observe.KindRunnerReady {
		t.Errorf("lab's bus got %+v, want the runner.ready event alone", events)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(p.Output()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if out := p.Output(); len(out) != 1 || out[0] != "connecting" {
		t.Errorf("output %q, want only what the program printed on stderr", out)
	}
}

// TestGateIsWhatTheProgramReports: Pause and Resume are commands; Paused
// and Waiting change when the program's gate events say so.
func TestGateIsWhatTheProgramReports(t *testing.T) {
	held := observe.Scope{Controller: "greeting", Key: "ns/a", ReconcileID: "r1"}
	script := echoReady(t) + `
while read -r command; do
	case "$command" in
	pause) ` + echoEvent(t, observe.GateEvent(observe.GatePaused, observe.Scope{})) + `; ` +
		echoEvent(t, observe.GateEvent(observe.GateWaiting, held)) + ` ;;
	resume) ` + echoEvent(t, observe.GateEvent(observe.GateResumed, observe.Scope{})) + ` ;;
	esac
done`
	p, err := start(t, script, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Stop() }()
	waitGate := func(what string, want func(observe.GateState) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !want(p.Gate()) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if g := p.Gate(); !want(g) {
			t.Fatalf("%s: gate %+v", what, g)
		}
	}
	p.Pause()
	waitGate("paused, one held", func(g observe.GateState) bool { return g.Paused && g.Waiting == 1 })
	if !p.Paused() || p.Waiting() != 1 {
		t.Errorf("Paused()=%v Waiting()=%d disagree with the gate", p.Paused(), p.Waiting())
	}
	p.Resume()
	waitGate("resumed", func(g observe.GateState) bool { return !g.Paused && g.Waiting == 0 })
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
// stopped after the ready timeout, with an error that says so. The
// timeout leaves the shell time to print its line on a loaded machine
// (300ms did not, at a load average of 15).
func TestStartGivesUpOnAProgramThatNeverGetsReady(t *testing.T) {
	_, err := start(t, `echo "still connecting" >&2; exec sleep 60`, 3*time.Second, nil)
	if err == nil || !strings.Contains(err.Error(), "did not start within 3s") || !strings.Contains(err.Error(), "still connecting") {
		t.Fatalf("Start: %v", err)
	}
}

// TestLongLinesAndRepeatedReadyEvents: a 2 MB line, on stderr or stdout,
// does not stop lab from reading the program's output (or the program
// would block on a full pipe), a second ready event is harmless, the
// learner's lines are echoed, and closing the input stops the program
// cleanly.
func TestLongLinesAndRepeatedReadyEvents(t *testing.T) {
	var echo labtest.SyncBuffer
	script := `head -c 2000000 /dev/zero | tr '\0' x >&2; echo >&2
head -c 2000000 /dev/zero | tr '\0' z; echo
` + echoReady(t) + `
` + echoReady(t) + `
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
	p, err := start(t, echoReady(t)+`; sleep 60 & wait`, time.Minute, nil)
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
