package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/labs/workspace"
)

// newTestWorkspace runs `lab init 3.1` into a new folder and returns it.
func newTestWorkspace(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ws")
	mustRun(t, "init", "3.1", "--dir", dir, "--lang", "en")
	return dir
}

func writeTestProgress(t *testing.T, dir, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, workspace.StateDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(workspace.ProgressPath(dir), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHintRepairsANegativeCounter: a hand-edited negative hint count shows
// the first hint instead of crashing.
func TestHintRepairsANegativeCounter(t *testing.T) {
	labtest.Hermetic(t)
	dir := newTestWorkspace(t)
	writeTestProgress(t, dir, `{"version":1,"lab":"3.1","exercises":{"results":{"status":"fail","hintsShown":-5}}}`)
	out := mustRun(t, "hint", "results", "--dir", dir, "--lang", "en")
	if !strings.Contains(out, "hint 1/3") {
		t.Errorf("hint with hintsShown -5:\n%s", out)
	}
	p, err := workspace.LoadProgress(dir)
	if err != nil || p.Exercises["results"].HintsShown != 1 {
		t.Errorf("progress after the hint = %+v, %v; want 1 hint shown", p.Exercises["results"], err)
	}
}

// TestWorkspaceWithoutStateFolderIsFoundFromInside: in a fresh clone (no
// .lab/), commands run in the workspace or a subfolder of it find it by
// its go.mod.
func TestWorkspaceWithoutStateFolderIsFoundFromInside(t *testing.T) {
	labtest.Hermetic(t)
	dir := newTestWorkspace(t)
	if err := os.RemoveAll(filepath.Join(dir, workspace.StateDir)); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(dir, "results"))
	for _, args := range [][]string{{"hint"}, {"hint", "3.1", "results"}} {
		out, errOut, code := labCmd(t, append(args, "--lang", "en")...)
		if code != 0 || !strings.Contains(out, "hint ") {
			t.Errorf("lab %s inside a workspace without .lab/: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
	}
	if out := mustRun(t, "list", "--lang", "en"); !strings.Contains(out, "lab 3.1 — Controller Runtime deep dive  (") || strings.Contains(out, "no workspace yet: lab init 3.1") {
		t.Errorf("list inside the workspace does not show it:\n%s", out)
	}
}

// TestProgressNamingAnotherLabIsReportedAsCorrupt: go.mod decides the lab;
// a progress file naming another or an unknown lab is corrupt progress,
// named, and set aside.
func TestProgressNamingAnotherLabIsReportedAsCorrupt(t *testing.T) {
	labtest.Hermetic(t)
	for _, other := range []string{"4.4", "9.9"} {
		dir := newTestWorkspace(t)
		writeTestProgress(t, dir, `{"version":1,"lab":"`+other+`","exercises":{}}`)
		out, errOut, code := labCmd(t, "hint", "--dir", dir, "--lang", "en")
		if code != 0 || !strings.Contains(out, "3.1 1. ") {
			t.Errorf("hint with progress of lab %s: exit %d\n%s%s", other, code, out, errOut)
		}
		if !strings.Contains(errOut, workspace.ProgressPath(dir)+" is corrupt") || strings.Contains(errOut, `no lab "9.9"`) {
			t.Errorf("hint with progress of lab %s does not report the corrupt progress file:\n%s", other, errOut)
		}
	}
}

// TestListRejectsABadDir: --dir must be a workspace; list does not quietly
// ignore it.
func TestListRejectsABadDir(t *testing.T) {
	labtest.Hermetic(t)
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		file:                                  "it is a file, not a folder",
		filepath.Join(t.TempDir(), "missing"): "no such file or directory",
	} {
		_, errOut, code := labCmd(t, "list", "--dir", dir)
		if code == 0 || !strings.Contains(errOut, "--dir: "+dir) || !strings.Contains(errOut, want) {
			t.Errorf("list --dir %s: exit %d, %q; want an error saying %q", dir, code, errOut, want)
		}
	}
	dir := newTestWorkspace(t)
	if out := mustRun(t, "list", "--dir", dir, "--lang", "en"); !strings.Contains(out, "("+displayDir(dir)+")") || !strings.Contains(out, "no workspace yet: lab init 4.4") {
		t.Errorf("list --dir of a 3.1 workspace:\n%s", out)
	}
}

// TestInitRefusesAForeignFolder: like lab start, lab init leaves a folder
// holding someone else's files alone.
func TestInitRefusesAForeignFolder(t *testing.T) {
	labtest.Hermetic(t)
	dir := t.TempDir()
	for name, content := range map[string]string{"go.mod": "module example.com/mine\n\ngo 1.26.0\n", "notes.txt": "mine\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code := labCmd(t, "init", "3.1", "--dir", dir)
	if code == 0 || !strings.Contains(errOut, dir) || !strings.Contains(errOut, "pick an empty or new folder") {
		t.Errorf("init into a foreign folder: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err == nil {
		t.Error("init wrote into the foreign folder")
	}
}
