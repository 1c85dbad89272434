package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/operator-lab/lab/internal/iostreams"
	"github.com/operator-lab/lab/internal/session"
	"github.com/operator-lab/lab/internal/tui/synth"
	"github.com/operator-lab/lab/labs/workspace"
	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator/scenario"
)

// TestStartRejectsBadInputBeforeStartingAnything: a bad argument is
// refused while the command line is read, before the run (and so before any
// workspace or control plane); an unknown lab is named with the known ones.
// (What the learner sees of it, one line and exit status 1, is
// testdata/script/bad_input.txtar.)
func TestStartRejectsBadInputBeforeStartingAnything(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"5.1"}, `no lab "5.1" (labs: 3.1, 4.4)`},
		{[]string{"4.4", "--set", "requeue=later"}, "valid: error, requeue, after, terminal"},
		{[]string{"4.4", "--set", "speed=11"}, `unknown switch "speed"`},
		{[]string{"4.4", "--lang", "de"}, `--lang: unsupported language "de": use one of en, ru`},
		{[]string{"4.4", "--mine", "--set", "requeue=error"}, "with --mine your code makes those choices"},
	} {
		opts, err := parseCmd(t, NewCmdStart, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || opts != nil {
			t.Errorf("lab start %s: err = %v (run reached: %v), want it refused saying %q", strings.Join(tc.args, " "), err, opts != nil, tc.want)
		}
	}
}

// TestStartWithoutATerminalPrintsTheEventStream: not on a TTY, lab start is
// lab run's text stream — here until the sample Database is Ready, then
// interrupted like Ctrl-C would.
func TestStartWithoutATerminalPrintsTheEventStream(t *testing.T) {
	t.Parallel() // waits on its own control plane; the serial tests (env, process checks) run first
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	runCtx, interrupt := context.WithCancel(ctx)
	ios, out, errOut := syncStreams()
	done := make(chan int, 1)
	ws := filepath.Join(t.TempDir(), "my-lab")
	go func() { done <- Execute(runCtx, ios, []string{"start", "4.4", "--set", "timescale=10", "--dir", ws}) }()
	for !strings.Contains(out.String(), "→ Ready") && ctx.Err() == nil {
		select {
		case code := <-done:
			t.Fatalf("lab start ended early: exit %d\nstderr:\n%s", code, errOut.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	interrupt()
	if code := <-done; code != 0 {
		t.Fatalf("lab start: exit %d\nstderr:\n%s", code, errOut.String())
	}
	stdout := out.String()
	for _, want := range []string{"watch", "queue.add", "reconcile.start", "reconcile.end", "phase", "→ Ready"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the stream lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(errOut.String(), "created ") || !strings.Contains(errOut.String(), "/orders") {
		t.Errorf("stderr does not name the sample object:\n%s", errOut.String())
	}
	if !strings.Contains(errOut.String(), "workspace "+ws+" (created)") {
		t.Errorf("stderr does not name the new workspace %s:\n%s", ws, errOut.String())
	}
	if id, err := workspace.Detect(ws); err != nil || id != "4.4" {
		t.Errorf("lab start did not create a 4.4 workspace in %s: %q, %v", ws, id, err)
	}
	if strings.Contains(stdout, "\x1b[") {
		t.Error("colour escapes written to a non-terminal")
	}
}

func writeTrace(t *testing.T, events []observe.Event) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	enc := observe.NewEncoder(f)
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReplayRejectsBadTraces(t *testing.T) {
	dir := t.TempDir()
	malformed := filepath.Join(dir, "bad.jsonl")
	trace := `{"v":1,"seq":1,"kind":"watch","time":"2026-01-01T00:00:00Z"}` + "\n" + `{"v":1,"seq":2,"kind":` + "\n"
	if err := os.WriteFile(malformed, []byte(trace), 0o600); err != nil {
		t.Fatal(err)
	}
	notATrace := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notATrace, []byte(`{"hello":"world"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ file, want string }{
		{filepath.Join(dir, "missing.jsonl"), "open the trace"},
		{malformed, "bad.jsonl: line 2"},
		{notATrace, `line 1: missing schema version "v"`},
		{empty, "holds no events"},
	}
	for _, tc := range cases {
		ios, _, _, _ := iostreams.Test()
		err := runReplay(context.Background(), &ReplayOptions{IO: ios, File: tc.file})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %q", filepath.Base(tc.file), err, tc.want)
		}
	}
}

func TestReplayWithoutATerminalPrintsTheTrace(t *testing.T) {
	sc := synth.New("database", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	sc.DatabaseLifecycle("lab/orders")
	path := writeTrace(t, sc.Events())
	ios, _, out, _ := iostreams.Test()
	if err := runReplay(context.Background(), &ReplayOptions{IO: ios, File: path}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(sc.Events()) {
		t.Fatalf("%d lines for %d events", len(lines), len(sc.Events()))
	}
	if !strings.Contains(out.String(), "Ready") {
		t.Fatalf("trace text lacks the Ready phase:\n%s", out.String())
	}
}

// TestCreateInvalidMakesATerminalError: the object the permanent-error
// demo creates is accepted by the API server and then rejected for good by
// the operator — a terminal result, in both labs (the second session
// reuses the first one's control plane).
func TestCreateInvalidMakesATerminalError(t *testing.T) {
	t.Parallel() // waits on its own control plane; the serial tests (env, process checks) run first
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	first, err := session.Start(ctx, session.Options{Lab: "4.4", Set: "timescale=10"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = first.Close() })
	second, err := session.Start(ctx, session.Options{Lab: "3.1", Kubeconfig: first.Kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = second.Close() })
	for _, sess := range []*session.Session{first, second} {
		rec := observe.NewRecorder(sess.Bus)
		controls := &liveControls{operatorDriver: &referenceDriver{sess: sess, gate: observe.NewGate()},
			objects: newLabObjects(sess, scenario.Reference(sess.Lab))}
		key, err := controls.CreateInvalid(ctx)
		if err != nil {
			t.Fatalf("lab %s: %v", sess.Lab, err)
		}
		err = rec.WaitFor(ctx, func(events []observe.Event) bool {
			for _, e := range events {
				if e.Kind == observe.KindReconcileEnd && e.Key == key && e.Result == observe.ResultTerminal {
					return true
				}
			}
			return false
		})
		if err != nil {
			t.Fatalf("lab %s: no terminal reconcile of %s: %v", sess.Lab, key, err)
		}
		rec.Close()
	}
}
