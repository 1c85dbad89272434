package cmd

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/internal/iostreams"
	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/labs/workspace"
)

// TestCleanDeletesOnlyBuildFiles: lab clean removes the workspace's build
// folders and binaries, says how much it freed, and leaves the workspace
// alone; a second clean has nothing to do.
func TestCleanDeletesOnlyBuildFiles(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ws, _, err := workspace.OpenOrCreate(mustLab(t, "3.1"), filepath.Join(t.TempDir(), "lab-3.1"), "en")
	if err != nil {
		t.Fatal(err)
	}
	paths, err := checker.BuildFiles(ws.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if !strings.HasPrefix(p, checker.CacheRoot()) {
			t.Fatalf("build file %s is outside %s", p, checker.CacheRoot())
		}
	}
	binary := filepath.Join(paths[1], "results.test")
	if err := os.MkdirAll(filepath.Dir(binary), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(binary, bytes.Repeat([]byte{1}, 3<<20), 0o700); err != nil {
		t.Fatal(err)
	}
	before := labtest.TakeSnapshot(t, ws.Dir)

	// A check holding its build lock: clean refuses and deletes nothing.
	lock, err := os.OpenFile(paths[0]+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if _, err := runCleanOf(CleanOptions{Dir: ws.Dir}); !errors.Is(err, checker.ErrBuildFilesInUse) {
		t.Errorf("clean during a check: %v, want ErrBuildFilesInUse", err)
	}
	if _, err := os.Stat(binary); err != nil {
		t.Errorf("clean during a check deleted the binary: %v", err)
	}
	lock.Close()

	clean := runCleanOf
	out, err := clean(CleanOptions{Dir: ws.Dir})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "3.0 MiB freed") {
		t.Errorf("lab clean said %q, want it to report 3.0 MiB freed", out)
	}
	if _, err := os.Stat(binary); err == nil {
		t.Error("the test binary is still there")
	}
	if changes := before.Changes(labtest.TakeSnapshot(t, ws.Dir)); len(changes) > 0 {
		t.Errorf("lab clean changed the workspace: %v", changes)
	}
	if out, err := clean(CleanOptions{Dir: ws.Dir}); err != nil || !strings.Contains(out, "No build files") {
		t.Errorf("second clean: %q, %v", out, err)
	}
	if _, errOut, code := labCmd(t, "clean", "3.1", "--all"); code == 0 || !strings.Contains(errOut, "leave out LAB") {
		t.Errorf("clean 3.1 --all: exit %d, %q", code, errOut)
	}
	if _, err := clean(CleanOptions{All: true}); err != nil {
		t.Errorf("clean --all: %v", err)
	}
	if _, err := os.Stat(checker.CacheRoot()); err == nil {
		t.Error("clean --all left the build cache folder")
	}
}

func runCleanOf(opts CleanOptions) (string, error) {
	ios, _, out, _ := iostreams.Test()
	ios.ErrOut = out
	opts.IO = ios
	err := runClean(context.Background(), &opts)
	return out.String(), err
}
