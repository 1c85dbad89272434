package labtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/operator-lab/lab/labs/workspace"
)

// Hermetic gives the test its own lab state folder and cache, so it never
// attaches to, or harms, a control plane or build files of the user's. Go's
// build cache stays shared: a private one would recompile Kubernetes.
func Hermetic(t *testing.T) {
	t.Helper()
	if os.Getenv("GOCACHE") == "" {
		cache, err := UserGoCache()
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("GOCACHE", cache)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("LAB_STATE_DIR", t.TempDir())
	t.Setenv(workspace.BackgroundBuildEnv, "off")
}

// HermeticProcess is Hermetic for a whole test binary, for its TestMain:
// the process (and every child it starts) gets its own lab state folder
// and cache, with Go's build cache pinned to the user's. Tests that set
// their own with t.Setenv still do. The returned function removes the
// folders; call it after m.Run.
func HermeticProcess() (cleanup func(), err error) {
	if os.Getenv("GOCACHE") == "" {
		cache, err := UserGoCache()
		if err != nil {
			return nil, err
		}
		// Before XDG_CACHE_HOME moves, or the default would move with it.
		if err := os.Setenv("GOCACHE", cache); err != nil {
			return nil, err
		}
	}
	root, err := os.MkdirTemp("", "lab-test-home-")
	if err != nil {
		return nil, err
	}
	cleanup = func() { _ = os.RemoveAll(root) }
	for name, dir := range map[string]string{"XDG_CACHE_HOME": filepath.Join(root, "cache"), "LAB_STATE_DIR": filepath.Join(root, "state")} {
		if err := os.Mkdir(dir, 0o700); err != nil {
			cleanup()
			return nil, err
		}
		if err := os.Setenv(name, dir); err != nil {
			cleanup()
			return nil, err
		}
	}
	// A test that wants the background build of the checks turns it on.
	if err := os.Setenv(workspace.BackgroundBuildEnv, "off"); err != nil {
		cleanup()
		return nil, err
	}
	return cleanup, nil
}

// UserGoCache is the Go build cache `go` uses with the current environment.
func UserGoCache() (string, error) {
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOCACHE: %w", err)
	}
	cache := strings.TrimSpace(string(out))
	if cache == "" || cache == "off" {
		return "", fmt.Errorf("go env GOCACHE gave %q: the tests need Go's build cache", cache)
	}
	return cache, nil
}
