package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/internal/proc"
)

// TestMain lets this test binary supervise the children that the commands
// it runs in-process start (see package proc), and gives the whole binary
// its own lab state folder and cache: a session a test starts never
// attaches to a developer's `lab env up`, nor uses their build folders.
func TestMain(m *testing.M) {
	if code, ok := proc.RunIfSupervisor(); ok {
		os.Exit(code)
	}
	cleanup, err := labtest.HermeticProcess()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cmd tests:", err)
		os.Exit(1)
	}
	code := m.Run()
	labtest.RemoveBinary()
	cleanup()
	os.Exit(code)
}

// TestTheBinaryIsHermetic: TestMain gave this binary its own state folder
// and cache, and left Go's build cache where it was.
func TestTheBinaryIsHermetic(t *testing.T) {
	cache := os.Getenv("XDG_CACHE_HOME")
	state, err := controlplane.StateDir()
	if err != nil {
		t.Fatal(err)
	}
	if cache == "" || !strings.HasPrefix(state, os.TempDir()) || filepath.Dir(state) != filepath.Dir(cache) {
		t.Errorf("the state folder %s is not the binary's own (XDG_CACHE_HOME=%q)", state, cache)
	}
	if root := checker.CacheRoot(); !strings.HasPrefix(root, cache+string(filepath.Separator)) {
		t.Errorf("the check builds are under %s, not the binary's cache %s", root, cache)
	}
	if goCache := os.Getenv("GOCACHE"); goCache == "" || strings.HasPrefix(goCache, cache) {
		t.Errorf("GOCACHE=%q: Go's build cache moved with the binary's cache %s", goCache, cache)
	}
}
