package workspace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/workspace"
)

func lab44(t *testing.T) *labs.Lab {
	t.Helper()
	lab, err := labs.Get("4.4")
	if err != nil {
		t.Fatal(err)
	}
	return lab
}

// TestOpenOrCreateLeavesAnExistingWorkspaceAlone: the first open creates
// the workspace; later ones use it as it is (a file the learner deleted
// stays deleted: restoring is Create's job), and a workspace of the other
// lab is refused with a way out.
func TestOpenOrCreateLeavesAnExistingWorkspaceAlone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	first, created, err := workspace.OpenOrCreate(lab31(t), dir, "en")
	if err != nil {
		t.Fatal(err)
	}
	if !created || first.Dir != dir || first.Lab.ID != "3.1" {
		t.Errorf("first open: %+v, created %v", first, created)
	}
	readme := filepath.Join(dir, "README.md")
	if err := os.Remove(readme); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(dir, "results", "reconciler.go")
	if err := os.WriteFile(mine, []byte("package results // mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, created, err := workspace.OpenOrCreate(lab31(t), dir, "en"); err != nil || created {
		t.Errorf("second open: created %v, %v", created, err)
	}
	if _, err := os.Stat(readme); err == nil {
		t.Error("the second open restored README.md, which the learner deleted")
	}
	if b, _ := os.ReadFile(mine); string(b) != "package results // mine\n" {
		t.Errorf("the learner's file changed: %q", b)
	}
	_, _, err = workspace.OpenOrCreate(lab44(t), dir, "en")
	if err == nil || !strings.Contains(err.Error(), "workspace of lab 3.1, not 4.4") || !strings.Contains(err.Error(), "--dir") {
		t.Errorf("opening 4.4 in a 3.1 workspace: %v", err)
	}
}

// TestOpenOrCreateFindsTheWorkspaceItIsIn: from inside a workspace (any
// folder of it), that workspace is used rather than a new one made inside
// it; from inside another lab's workspace it refuses.
func TestOpenOrCreateFindsTheWorkspaceItIsIn(t *testing.T) {
	ws, _, err := workspace.OpenOrCreate(lab31(t), filepath.Join(t.TempDir(), "mine"), "en")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(ws.Dir, "results"))
	found, created, err := workspace.OpenOrCreate(lab31(t), "", "en")
	if err != nil {
		t.Fatal(err)
	}
	if found.Dir != ws.Dir || created {
		t.Errorf("from inside %s the open used %s (created=%v)", ws.Dir, found.Dir, created)
	}
	if _, err := os.Stat(filepath.Join(ws.Dir, "results", "lab-3.1")); err == nil {
		t.Error("a workspace was made inside the workspace")
	}
	if _, _, err := workspace.OpenOrCreate(lab44(t), "", "en"); err == nil || !strings.Contains(err.Error(), "inside the workspace of lab 3.1") {
		t.Errorf("opening 4.4 inside a 3.1 workspace: %v", err)
	}
	// Resolve finds it too, with or without the lab named.
	for _, id := range []string{"", "3.1"} {
		if ref, err := workspace.Resolve(id, ""); err != nil || ref.Dir != ws.Dir {
			t.Errorf("Resolve(%q) from inside: %+v, %v", id, ref, err)
		}
	}
}

// TestOpenOrCreateLeavesOtherFoldersAlone: a folder that holds something
// else is never filled with lab's files; the error says how to go on.
func TestOpenOrCreateLeavesOtherFoldersAlone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "project")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := labtest.TakeSnapshot(t, dir)
	_, _, err := workspace.OpenOrCreate(lab31(t), dir, "en")
	if err == nil || !strings.Contains(err.Error(), "not empty and not a lab workspace") || !strings.Contains(err.Error(), "--dir") {
		t.Errorf("opening another project: %v", err)
	}
	if changes := before.Changes(labtest.TakeSnapshot(t, dir)); len(changes) > 0 {
		t.Errorf("the open wrote into another project: %v", changes)
	}
}

// TestResolveSaysHowToGoOn: outside any workspace, Resolve names the
// command that makes one.
func TestResolveSaysHowToGoOn(t *testing.T) {
	here, empty := t.TempDir(), t.TempDir()
	// Made before the Chdir: a test binary asks the go command, in lab's
	// source tree, for the modules to pin.
	ws, _, err := workspace.OpenOrCreate(lab31(t), filepath.Join(here, workspace.DefaultDir("3.1")), "en")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(empty)
	if _, err := workspace.Resolve("", ""); err == nil || !strings.Contains(err.Error(), "lab init 3.1") {
		t.Errorf("Resolve with nothing here: %v", err)
	}
	if _, err := workspace.Resolve("4.4", ""); err == nil || !strings.Contains(err.Error(), "lab init 4.4") {
		t.Errorf("Resolve(4.4) with nothing here: %v", err)
	}
	if _, err := workspace.Resolve("9.9", ""); err == nil || !strings.Contains(err.Error(), `no lab "9.9"`) {
		t.Errorf("Resolve(9.9): %v", err)
	}
	t.Chdir(here)
	if ref, err := workspace.Resolve("", ""); err != nil || ref.Dir != ws.Dir || ref.Lab.ID != "3.1" {
		t.Errorf("Resolve with only ./lab-3.1 here: %+v, %v", ref, err)
	}
	if _, err := workspace.Resolve("4.4", ws.Dir); err == nil || !strings.Contains(err.Error(), "workspace of lab 3.1, not 4.4") {
		t.Errorf("Resolve(4.4, a 3.1 workspace): %v", err)
	}
}
