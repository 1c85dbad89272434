package cmd

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/internal/proc"
	"github.com/operator-lab/lab/labs/workspace"
)

// TestInitBuildsTheChecksAndCheckJoinsTheBuild: `lab init` leaves the
// checks building in the background; a `lab check` started meanwhile waits
// for that build instead of starting a second, and grades as ever; the
// background build ends by itself.
func TestInitBuildsTheChecksAndCheckJoinsTheBuild(t *testing.T) {
	t.Parallel()
	cp := labControlPlane(t, "3.1")
	dir := filepath.Join(t.TempDir(), "ws")
	t.Cleanup(func() {
		waitForNoBuildOf(t, dir)
		_ = checker.RemoveBuildFiles(dir)
	})
	lab := func(args ...string) (string, string, int) {
		return labtest.RunBinary(t, []string{workspace.BackgroundBuildEnv + "=on"}, args...)
	}
	out, errOut, code := lab("init", "3.1", "--dir", dir, "--lang", "en")
	if code != 0 || !strings.Contains(out, "building the checks in the background") {
		t.Fatalf("lab init: exit %d, no word of the background build:\n%s%s", code, out, errOut)
	}
	// The kept-binaries folder appears once the build holds the build lock.
	files, err := checker.BuildFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	binDir := files[1]
	deadline := time.Now().Add(time.Minute)
	for _, err := os.Stat(binDir); err != nil; _, err = os.Stat(binDir) {
		if time.Now().After(deadline) {
			t.Fatalf("no background build took the build folder within a minute (%s)", binDir)
		}
		time.Sleep(20 * time.Millisecond)
	}
	out, errOut, code = lab("check", "--dir", dir, "--exercise", "results", "--lang", "en", "--kubeconfig", cp.KubeconfigPath)
	if !strings.Contains(errOut, "waiting for another build of this workspace's checks") {
		t.Errorf("the check did not wait for the background build:\n%s", errOut)
	}
	if code != 1 || !strings.Contains(out, "✗ 3. Choosing the Result") {
		t.Errorf("check of the starter after the background build: exit %d\n%s%s", code, out, errOut)
	}
	// Every exercise's binary was built, not just the one checked.
	for _, e := range mustLab(t, "3.1").Exercises {
		if _, err := os.Stat(filepath.Join(binDir, filepath.Base(e.Package)+".test")); err != nil {
			t.Errorf("the background build left no binary for %s: %v", e.ID, err)
		}
	}
}

// waitForNoBuildOf waits until no `lab build-checks` of dir runs.
func waitForNoBuildOf(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		running := false
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			cmdline := strings.Join(proc.CommandLine(pid), " ")
			if strings.Contains(cmdline, buildChecksCommand) && strings.Contains(cmdline, dir) {
				running = true
			}
		}
		if !running {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("the background build of %s still runs 30 s after the check", dir)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}
