package checker_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/checker/checkertest"
	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/workspace"
)

// TestCheckAgainstAStoppedControlPlaneGradesNothing: correct code checked
// against a control plane that no longer answers is not graded "failed":
// the exercise is an error of the environment, and progress keeps its
// previous grade.
func TestCheckAgainstAStoppedControlPlaneGradesNothing(t *testing.T) {
	labtest.Hermetic(t)
	lab := lab31(t)
	crds, err := lab.CustomResourceDefinitions()
	if err != nil {
		t.Fatal(err)
	}
	cp, err := controlplane.Start(context.Background(), controlplane.Options{CRDs: crds})
	if err != nil {
		t.Fatal(err)
	}
	// Stop removes the control plane's folder and its kubeconfig with it;
	// keep a copy, which then points at nothing.
	kc, err := os.ReadFile(cp.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(stale, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cp.Stop(); err != nil {
		t.Fatal(err)
	}

	dir := checkertest.Workspace(t, lab, true, nil)
	earlier := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	progress := workspace.NewProgress(lab.ID)
	progress.Record("results", workspace.StatusPass, earlier)
	e, _ := lab.Exercise("results")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	report, err := checker.Check(ctx, checker.Options{Lab: lab, Dir: dir, Exercises: []*labs.Exercise{e}, Kubeconfig: stale})
	if err != nil {
		t.Fatal(err)
	}
	res := result(t, report, "results")
	if res.Status != checker.StatusError || !res.Ungraded || !strings.Contains(res.Reason, "the control plane stopped answering during the check") {
		t.Fatalf("results graded %s (%s), want an ungraded error", res.Status, res.Reason)
	}
	report.Record(progress)
	if p := progress.Exercises["results"]; p.Status != workspace.StatusPass || !p.CheckedAt.Equal(earlier) {
		t.Errorf("progress after the check = %+v, want the earlier pass kept", p)
	}
}
