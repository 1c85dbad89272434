package cmd

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/internal/iostreams"
	"github.com/operator-lab/lab/observe"
)

func runForTest(t *testing.T, opts RunOptions) (stdout, stderr string, err error) {
	t.Helper()
	if opts.Format == "" {
		opts.Format = formatText
	}
	if opts.Settle == 0 {
		opts.Settle = 300 * time.Millisecond
	}
	ios, _, out, errOut := iostreams.Test()
	opts.IO = ios
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	err = runRun(ctx, &opts)
	return out.String(), errOut.String(), err
}

// TestRunJSONAndRecordCarryTheSameEvents runs lab 4.4's create scenario on a
// private control plane with JSON output and a record file.
func TestRunJSONAndRecordCarryTheSameEvents(t *testing.T) {
	t.Setenv("LAB_STATE_DIR", t.TempDir()) // never attach to a developer's lab env
	record := filepath.Join(t.TempDir(), "trace.jsonl")
	stdout, stderr, err := runForTest(t, RunOptions{
		Lab: "4.4", Scenario: "create", Format: formatJSON, Record: record, Set: []string{"timescale=100"},
	})
	if err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr)
	}
	events, err := observe.ReadAll(strings.NewReader(stdout))
	if err != nil {
		t.Fatalf("stdout is not JSON Lines only: %v\n%s", err, stdout)
	}
	var phases []string
	for _, e := range events {
		if e.Kind == observe.KindPhase {
			phases = append(phases, e.To)
		}
	}
	want := []string{"Pending", "Provisioning", "Configuring", "Deploying", "Verifying", "Ready"}
	if !slices.Equal(phases, want) {
		t.Errorf("phases = %v, want %v", phases, want)
	}
	recorded, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	if string(recorded) != stdout {
		t.Errorf("the record file differs from stdout (%d vs %d bytes)", len(recorded), len(stdout))
	}
	for _, want := range []string{"summary:", "reconciles:", "time to Ready:"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestRunTextOnAnExistingClusterCleansUp points lab run at a separately
// started control plane without lab's CRDs: run installs them, works in a
// namespace of its own, and deletes it at the end.
func TestRunTextOnAnExistingClusterCleansUp(t *testing.T) {
	t.Parallel() // waits on its own control plane; the serial tests (env, process checks) run first
	cp, err := controlplane.Start(context.Background(), controlplane.Options{SetupLog: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cp.Stop() }()

	stdout, stderr, err := runForTest(t, RunOptions{
		Lab: "3.1", Scenario: "update-burst", Kubeconfig: cp.KubeconfigPath, Set: []string{"timescale=100"},
	})
	if err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "CRDs installed (2)") {
		t.Errorf("stderr does not report installing the CRDs:\n%s", stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) < 20 || !strings.Contains(stdout, "reconcile.end") || !strings.Contains(stdout, "summary:") {
		t.Fatalf("text output:\n%s", stdout)
	}
	if strings.Contains(stdout, "\x1b[") {
		t.Errorf("colour codes in output that is not a terminal")
	}

	// Without a scenario the operator runs until --for; the second run finds
	// the CRDs in place.
	stdout, stderr, err = runForTest(t, RunOptions{
		Lab: "3.1", Scenario: noScenario, For: time.Second, Kubeconfig: cp.KubeconfigPath, Set: []string{"requeue=error,external=down"},
	})
	if err != nil || !strings.Contains(stderr, "stopped: --for elapsed") || !strings.Contains(stderr, "CRDs present") {
		t.Fatalf("run --scenario none --for 1s: %v\nstderr:\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "switch") || !strings.Contains(stdout, "requeue=error") {
		t.Errorf("the switch events are not in the output:\n%s", stdout)
	}

	c, err := client.New(cp.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var nss corev1.NamespaceList
	if err := c.List(context.Background(), &nss); err != nil {
		t.Fatal(err)
	}
	for _, ns := range nss.Items {
		if strings.HasPrefix(ns.Name, "lab-run-") && ns.DeletionTimestamp == nil {
			t.Errorf("namespace %s was left behind", ns.Name)
		}
	}
}
