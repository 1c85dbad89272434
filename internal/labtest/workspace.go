package labtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/workspace"
)

// Workspace creates a workspace of lab in a temporary folder, with the
// exercise files as the solutions (solved) or the starters, then writes
// overrides (file → content) over them, and returns its path.
func Workspace(tb testing.TB, lab *labs.Lab, solved bool, overrides map[string]string) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "lab-"+lab.ID)
	if _, err := workspace.Create(lab, dir, "en"); err != nil {
		tb.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range lab.Exercises {
		for _, f := range e.Files {
			b, err := e.Starter(f)
			if solved {
				b, err = e.Solution(f)
			}
			if err != nil {
				tb.Fatal(err)
			}
			files[f] = string(b)
		}
	}
	for f, content := range overrides {
		files[f] = content
	}
	for f, content := range files {
		WriteFile(tb, dir, f, content)
	}
	return dir
}

// WriteFile writes content to dir/rel (a slash path), making its folders.
func WriteFile(tb testing.TB, dir, rel, content string) {
	tb.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}
