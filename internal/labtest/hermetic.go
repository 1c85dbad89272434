package labtest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Hermetic gives the test its own lab state folder and cache, so it never
// attaches to, or harms, a control plane or build files of the user's. Go's
// build cache stays shared: a private one would recompile Kubernetes.
func Hermetic(t *testing.T) {
	t.Helper()
	if os.Getenv("GOCACHE") == "" {
		out, err := exec.Command("go", "env", "GOCACHE").Output()
		if err != nil {
			t.Fatalf("go env GOCACHE: %v", err)
		}
		t.Setenv("GOCACHE", strings.TrimSpace(string(out)))
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("LAB_STATE_DIR", t.TempDir())
}
