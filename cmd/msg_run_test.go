package cmd

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/internal/labtest"
)

// TestRunCutShort: a run ended by --for before its scenario finished says
// so (no "failed" create) and exits 0; an interrupted run prints its
// summary and exits 128+signal. With the dependency down, 3.1's create scenario
// never finishes on its own.
func TestRunCutShort(t *testing.T) {
	labtest.Hermetic(t)
	cp, err := controlplane.Start(context.Background(), controlplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cp.Stop() }()
	opts := RunOptions{Lab: "3.1", Scenario: "create", Kubeconfig: cp.KubeconfigPath, Set: []string{"external=down"}}

	t.Run("for", func(t *testing.T) {
		o := opts
		o.For = 2 * time.Second
		stdout, stderr, err := runForTest(t, o)
		if err != nil {
			t.Fatalf("run --for 2s: %v\n%s", err, stderr)
		}
		if strings.Contains(stdout, "create failed") || strings.Contains(stdout, "deadline exceeded") {
			t.Errorf("the cut is reported as a failed create:\n%s", stdout)
		}
		if !strings.Contains(stdout, `create stopped "the run ended after --for 2s, before the scenario finished"`) ||
			!strings.Contains(stderr, "stopped: --for elapsed (the run ended after 2s)") {
			t.Errorf("the run does not say it ended after --for:\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
		}
	})

	t.Run("interrupt", func(t *testing.T) {
		var out, errOut *labtest.SyncBuffer
		o := opts
		o.Format, o.Settle = formatText, 300*time.Millisecond
		o.IO, out, errOut = syncStreams()
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		done := make(chan error, 1)
		go func() { done <- runRun(ctx, &o) }()
		deadline := time.Now().Add(2 * time.Minute)
		for !strings.Contains(out.String(), "create") {
			if time.Now().After(deadline) {
				t.Fatalf("the scenario did not start:\n%s", errOut.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		cancel(stopSignal{syscall.SIGTERM}) // what SIGTERM does to the command's context
		var err error
		select {
		case err = <-done:
		case <-time.After(time.Minute):
			t.Fatal("the interrupted run did not end")
		}
		var exit exitError
		if !errors.As(err, &exit) || exit.code != 143 {
			t.Errorf("run stopped by SIGTERM returned %v, want exit status 143 (128+15)", err)
		}
		if !strings.Contains(out.String(), "summary:") || !strings.Contains(errOut.String(), "lab run: interrupted") {
			t.Errorf("no summary or interrupt notice:\nstdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
		}
		if strings.Contains(out.String(), "create failed") {
			t.Errorf("the interrupt is reported as a failed create:\n%s", out.String())
		}
	})
}
