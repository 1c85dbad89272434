package cmd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/internal/iostreams"
	"github.com/operator-lab/lab/labs/workspace"
)

// TestCleanRefusesWhileABuildRuns: while a check or `lab start --mine`
// holds a workspace's build lock, lab clean deletes nothing and says why.
// (What clean deletes, and that it leaves the workspace alone, is
// testdata/script/clean.txtar.)
func TestCleanRefusesWhileABuildRuns(t *testing.T) {
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
	if err := os.WriteFile(binary, []byte("binary"), 0o700); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(paths[0]+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if _, err := runCleanOf(CleanOptions{Dir: ws.Dir}); !errors.Is(err, checker.ErrBuildFilesInUse) {
		t.Errorf("clean during a check: %v, want ErrBuildFilesInUse", err)
	}
	if _, err := runCleanOf(CleanOptions{All: true}); !errors.Is(err, checker.ErrBuildFilesInUse) {
		t.Errorf("clean --all during a check: %v, want ErrBuildFilesInUse", err)
	}
	if _, err := os.Stat(binary); err != nil {
		t.Errorf("clean during a check deleted the binary: %v", err)
	}
}

func runCleanOf(opts CleanOptions) (string, error) {
	ios, _, out, _ := iostreams.Test()
	ios.ErrOut = out
	opts.IO = ios
	err := runClean(context.Background(), &opts)
	return out.String(), err
}
