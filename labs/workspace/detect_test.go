package workspace_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/operator-lab/lab/labs/workspace"
)

func newWorkspace(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ws")
	if _, err := workspace.Create(lab31(t), dir, "en"); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeProgress(t *testing.T, dir, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, workspace.StateDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(workspace.ProgressPath(dir), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWorkspaceWithoutStateFolderIsFound: a fresh clone has no .lab/ (the
// workspace's .gitignore leaves it out); go.mod's module still makes it the
// lab's workspace, found from the folder and from any subfolder.
func TestWorkspaceWithoutStateFolderIsFound(t *testing.T) {
	dir := newWorkspace(t)
	if err := os.RemoveAll(filepath.Join(dir, workspace.StateDir)); err != nil {
		t.Fatal(err)
	}
	if id, err := workspace.Detect(dir); err != nil || id != "3.1" {
		t.Errorf("Detect = %q, %v; want 3.1", id, err)
	}
	for _, from := range []string{dir, filepath.Join(dir, "results"), filepath.Join(dir, "api", "v1alpha1")} {
		if got := workspace.Enclosing(from); got != dir {
			t.Errorf("Enclosing(%s) = %q, want %s", from, got, dir)
		}
	}
	if got := workspace.Enclosing(t.TempDir()); got != "" {
		t.Errorf("Enclosing of a folder outside any workspace = %q", got)
	}
}

// TestGoModDecidesTheLab: a progress file naming another lab than go.mod's
// module, or a lab that does not exist, is corrupt progress (naming the
// file), not a reason to treat the workspace as another lab's.
func TestGoModDecidesTheLab(t *testing.T) {
	for _, tc := range []struct{ lab, want string }{
		{"4.4", "it names lab 4.4, but go.mod's module example.com/lab31 is lab 3.1's"},
		{"9.9", `it names lab "9.9", which this lab build does not have`},
	} {
		dir := newWorkspace(t)
		writeProgress(t, dir, `{"version":1,"lab":"`+tc.lab+`","exercises":{}}`)
		if id, err := workspace.Detect(dir); err != nil || id != "3.1" {
			t.Errorf("lab %s in progress: Detect = %q, %v; want 3.1 (go.mod)", tc.lab, id, err)
		}
		_, err := workspace.LoadProgress(dir)
		var corrupt *workspace.CorruptProgressError
		if !errors.As(err, &corrupt) || !strings.Contains(err.Error(), workspace.ProgressPath(dir)) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("lab %s in progress: LoadProgress error = %v, want corrupt progress naming the file and %q", tc.lab, err, tc.want)
		}
		p, notice, err := workspace.LoadOrRebuildProgress(dir, "3.1")
		if err != nil || p.Lab != "3.1" || !strings.Contains(notice, "corrupt") {
			t.Errorf("lab %s in progress: LoadOrRebuildProgress = %+v, %q, %v", tc.lab, p, notice, err)
		}
	}

	// Without a lab's go.mod the progress file is what is left to tell.
	dir := newWorkspace(t)
	if err := os.Remove(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatal(err)
	}
	if id, err := workspace.Detect(dir); err != nil || id != "3.1" {
		t.Errorf("no go.mod: Detect = %q, %v; want 3.1 from progress", id, err)
	}
}

// TestNegativeHintCountIsRepaired: a hand-edited negative hint count reads
// as none shown.
func TestNegativeHintCountIsRepaired(t *testing.T) {
	dir := newWorkspace(t)
	writeProgress(t, dir, `{"version":1,"lab":"3.1","exercises":{"results":{"status":"fail","hintsShown":-5}}}`)
	p, err := workspace.LoadProgress(dir)
	if err != nil {
		t.Fatal(err)
	}
	if e := p.Exercises["results"]; e.HintsShown != 0 || e.NextHint(3) != 0 {
		t.Errorf("hintsShown -5 reads as %d, next hint %d; want 0, 0", e.HintsShown, e.NextHint(3))
	}
	var none *workspace.ExerciseProgress
	if got := (&workspace.ExerciseProgress{HintsShown: 999}).NextHint(3); got != 2 || none.NextHint(3) != 0 {
		t.Errorf("NextHint: 999 shown → %d, none → %d; want 2, 0", got, none.NextHint(3))
	}
}

// TestCreateRefusesAForeignFolder: lab init never spreads a workspace into
// a folder holding someone else's files.
func TestCreateRefusesAForeignFolder(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"go.mod": "module example.com/mine\n\ngo 1.26.0\n", "notes.txt": "mine\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := workspace.Create(lab31(t), dir, "en")
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "pick an empty or new folder") {
		t.Fatalf("Create in a foreign folder = %v, want a refusal naming %s", err, dir)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("Create wrote into the foreign folder: %d entries", len(entries))
	}
}
