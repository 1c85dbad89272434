package workspace_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/operator-lab/lab/internal/labtest"

	"github.com/operator-lab/lab/labs/workspace"
)

// watchDebounce is short: the tests wait on the changes, not on time.
const watchDebounce = 20 * time.Millisecond

// changes reads what a Watch reports.
type changes struct {
	t  *testing.T
	ch <-chan []string
}

func startWatch(t *testing.T, dir string, filter workspace.Filter) (*changes, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch, err := workspace.Watch(ctx, dir, filter, watchDebounce)
	if err != nil {
		t.Fatal(err)
	}
	return &changes{t: t, ch: ch}, cancel
}

// await returns every path reported until one of the reports holds want.
func (c *changes) await(want string) (seen []string) {
	c.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case batch, ok := <-c.ch:
			if !ok {
				c.t.Fatalf("the watch ended before %q changed (saw %v)", want, seen)
			}
			if !slices.IsSorted(batch) || len(batch) == 0 {
				c.t.Errorf("a report %v is empty or not sorted", batch)
			}
			seen = append(seen, batch...)
			if slices.Contains(batch, want) {
				return seen
			}
		case <-timeout:
			c.t.Fatalf("no change of %q reported (saw %v)", want, seen)
		}
	}
}

// closed waits for the channel to close (ctx ended).
func (c *changes) closed() {
	c.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case _, ok := <-c.ch:
			if !ok {
				return
			}
		case <-timeout:
			c.t.Fatal("the watch did not end with its context")
		}
	}
}

// TestWatchSourceFiles: Go files anywhere but hidden folders count, other
// files do not; a folder made after the watch began is watched too, and
// the file already in it counts.
func TestWatchSourceFiles(t *testing.T) {
	dir := t.TempDir()
	labtest.WriteFile(t, dir, "pkg/old.go", "package pkg\n")
	c, cancel := startWatch(t, dir, workspace.SourceFiles)

	// Each ignored write comes before the one awaited: had it counted, it
	// would be reported first or together.
	for _, step := range []struct{ ignored, counted string }{
		{"notes.txt", "pkg/a.go"},
		{".git/hooks/pre-commit.go", "go.mod"},
		{".lab/progress.json", "newpkg/b.go"}, // newpkg is made by this write
		{"newpkg/b.txt", "newpkg/b.go"},       // newpkg's own watch
		{"newpkg/deeper/c.txt", "newpkg/deeper/c.go"},
	} {
		labtest.WriteFile(t, dir, step.ignored, "x\n")
		labtest.WriteFile(t, dir, step.counted, "package x\n")
		if seen := c.await(step.counted); slices.Contains(seen, step.ignored) {
			t.Errorf("%s was reported as changed: %v", step.ignored, seen)
		}
	}
	if err := os.Remove(filepath.Join(dir, "pkg", "old.go")); err != nil {
		t.Fatal(err)
	}
	c.await("pkg/old.go")
	// A folder moved in is watched, with its files.
	moved := t.TempDir()
	labtest.WriteFile(t, moved, "m.go", "package m\n")
	if err := os.Rename(moved, filepath.Join(dir, "moved")); err != nil {
		t.Fatal(err)
	}
	c.await("moved/m.go")
	labtest.WriteFile(t, dir, "moved/n.go", "package m\n")
	c.await("moved/n.go")

	cancel()
	c.closed()
}

// TestWatchProgressFile follows the progress file as `lab check` writes it
// (a rename into .lab), through .lab and the whole workspace being deleted
// and made again.
func TestWatchProgressFile(t *testing.T) {
	dir := newWorkspace(t)
	progressRel := filepath.ToSlash(workspace.ProgressPath(""))
	c, _ := startWatch(t, dir, workspace.ProgressFile)
	save := func() {
		t.Helper()
		if err := workspace.SaveProgress(dir, workspace.NewProgress("3.1")); err != nil {
			t.Fatal(err)
		}
	}

	labtest.WriteFile(t, dir, "README.md", "mine\n")
	labtest.WriteFile(t, dir, "results/reconciler.go", "package results\n")
	save()
	if seen := c.await(progressRel); len(seen) != 1 {
		t.Errorf("other files were reported with the progress file: %v", seen)
	}

	if err := os.RemoveAll(filepath.Join(dir, workspace.StateDir)); err != nil {
		t.Fatal(err)
	}
	c.await(progressRel)
	save() // makes .lab again
	c.await(progressRel)

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	c.await(".")
	save() // makes the workspace again: found by the retry
	if seen := c.await(progressRel); !slices.Contains(seen, ".") {
		t.Errorf("the workspace coming back was not reported as a whole: %v", seen)
	}
	save()
	c.await(progressRel) // watched again, not just found once
}

// TestWatchWaitsForAFolderThatIsNotThereYet: watching a missing folder is
// no error; it is watched once it exists.
func TestWatchWaitsForAFolderThatIsNotThereYet(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "later")
	c, cancel := startWatch(t, dir, workspace.SourceFiles)
	labtest.WriteFile(t, dir, "main.go", "package main\n")
	c.await("main.go")
	cancel()
	c.closed()
}

func TestWatchFilters(t *testing.T) {
	for _, tc := range []struct {
		filter workspace.Filter
		rel    string
		isDir  bool
		want   bool
	}{
		{workspace.SourceFiles, "a/b.go", false, true},
		{workspace.SourceFiles, "go.sum", false, true},
		{workspace.SourceFiles, "README.md", false, false},
		{workspace.SourceFiles, "a/.git", true, false},
		{workspace.SourceFiles, "a/b", true, true},
		{workspace.ProgressFile, ".lab", true, true},
		{workspace.ProgressFile, ".lab/progress.json", false, true},
		{workspace.ProgressFile, ".lab/backups", true, false},
		{workspace.ProgressFile, "results", true, false},
		{workspace.ProgressFile, "progress.json", false, false},
	} {
		if got := tc.filter(tc.rel, tc.isDir); got != tc.want {
			t.Errorf("filter(%q, dir=%v) = %v, want %v", tc.rel, tc.isDir, got, tc.want)
		}
	}
}
