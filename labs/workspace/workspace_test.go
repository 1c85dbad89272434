package workspace_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/workspace"
)

func lab31(t *testing.T) *labs.Lab {
	t.Helper()
	lab, err := labs.Get("3.1")
	if err != nil {
		t.Fatal(err)
	}
	return lab
}

func TestCreateWritesStarterAndNeverOverwrites(t *testing.T) {
	lab := lab31(t)
	dir := filepath.Join(t.TempDir(), "ws")
	created, err := workspace.Create(lab, dir, "ru")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"go.mod", "go.sum", "README.md", "manager/manager.go", "api/v1alpha1/helloworld_types.go", "api/v1alpha1/groupversion_info.go", "config/crd/learn.operator-lab.dev_helloworlds.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, want)); err != nil {
			t.Errorf("workspace lacks %s: %v", want, err)
		}
	}
	starter, _ := lab.Exercises[0].Starter("manager/manager.go")
	got, _ := os.ReadFile(filepath.Join(dir, "manager/manager.go"))
	if !bytes.Equal(got, starter) {
		t.Errorf("manager/manager.go is not the starter")
	}
	readme, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	if !strings.Contains(string(readme), "Выбор Result") {
		t.Errorf("README is not in Russian:\n%s", readme)
	}
	if id, err := workspace.Detect(dir); err != nil || id != "3.1" {
		t.Errorf("Detect = %q, %v; want 3.1", id, err)
	}

	// The learner edits one file and deletes another; Create again restores
	// only the deleted one.
	mine := []byte("package manager // mine\n")
	if err := os.WriteFile(filepath.Join(dir, "manager/manager.go"), mine, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "basics/reconciler.go")); err != nil {
		t.Fatal(err)
	}
	again, err := workspace.Create(lab, dir, "en")
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Written) != 1 || again.Written[0] != "basics/reconciler.go" {
		t.Errorf("second Create wrote %v, want only basics/reconciler.go", again.Written)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "manager/manager.go")); !bytes.Equal(got, mine) {
		t.Errorf("second Create overwrote the learner's file")
	}
	_ = created
}

func TestPinnedModuleBuildsOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the workspace")
	}
	lab := lab31(t)
	dir := t.TempDir()
	if _, err := workspace.Create(lab, dir, "en"); err != nil {
		t.Fatal(err)
	}
	gomod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	if !strings.Contains(string(gomod), "sigs.k8s.io/controller-runtime v0.25.2") {
		t.Fatalf("go.mod does not pin controller-runtime v0.25.2:\n%s", gomod)
	}
	// Offline and read-only: every module must come from the cache and every
	// checksum must already be in go.sum.
	cmd := exec.Command("go", "build", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly", "GOWORK=off", "GOSUMDB=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the fresh workspace does not build offline: %v\n%s", err, out)
	}
}

func TestProgressCorruptIsMovedAsideAndRebuilt(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, workspace.StateDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(workspace.ProgressPath(dir), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := workspace.LoadProgress(dir)
	var corrupt *workspace.CorruptProgressError
	if !errors.As(err, &corrupt) {
		t.Fatalf("LoadProgress error = %v, want CorruptProgressError", err)
	}
	p, notice, err := workspace.LoadOrRebuildProgress(dir, "3.1")
	if err != nil || p.Lab != "3.1" || len(p.Exercises) != 0 || !strings.Contains(notice, "corrupt") {
		t.Fatalf("LoadOrRebuildProgress = %+v, %q, %v", p, notice, err)
	}
	matches, _ := filepath.Glob(workspace.ProgressPath(dir) + ".corrupt-*")
	if len(matches) != 1 {
		t.Errorf("corrupt file not kept aside: %v", matches)
	}
	// A second corrupt file within the same second is kept too.
	if err := os.WriteFile(workspace.ProgressPath(dir), []byte("{second"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := workspace.LoadOrRebuildProgress(dir, "3.1"); err != nil {
		t.Fatal(err)
	}
	matches, _ = filepath.Glob(workspace.ProgressPath(dir) + ".corrupt-*")
	if len(matches) != 2 {
		t.Errorf("two corrupt files set aside, %d kept: %v", len(matches), matches)
	}
	p.Record("manager", workspace.StatusPass, p.Exercise("manager").CheckedAt)
	if err := workspace.SaveProgress(dir, p); err != nil {
		t.Fatal(err)
	}
	back, err := workspace.LoadProgress(dir)
	if err != nil || back.Exercises["manager"].Status != workspace.StatusPass || !back.Exercises["manager"].EverPassed {
		t.Fatalf("round trip = %+v, %v", back, err)
	}
}

func TestReplaceKeepsBackup(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "a", "b.go")
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	backupDir := workspace.BackupDir(dir, "test")
	backup, err := workspace.Replace(dir, "a/b.go", []byte("new"), backupDir)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(backup); string(got) != "old" {
		t.Errorf("backup holds %q", got)
	}
	if got, _ := os.ReadFile(target); string(got) != "new" {
		t.Errorf("target holds %q", got)
	}
	if again, _ := workspace.Replace(dir, "a/b.go", []byte("new"), backupDir); again != "" {
		t.Errorf("an unchanged file was backed up again: %s", again)
	}
}
