package cmd_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/operator-lab/lab/internal/labtest"
)

// labBinary builds the real lab binary (once per test process).
func labBinary(t *testing.T) string {
	t.Helper()
	bin, err := labtest.Binary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// runLab runs the lab binary with an isolated state directory and returns
// its stdout, stderr and exit code.
func runLab(t *testing.T, stateDir string, args ...string) (string, string, int) {
	t.Helper()
	return labtest.RunBinary(t, []string{"LAB_STATE_DIR=" + stateDir}, args...)
}

func TestNoControlPlaneProcessOutlivesLab(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(labBinary(t), "env", "up", "--foreground")
			cmd.Env = append(os.Environ(), "LAB_STATE_DIR="+t.TempDir())
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill() }()
			waitForLine(t, stdout, "running until interrupted", 2*time.Minute)

			var held []int
			for _, pid := range labtest.Descendants(cmd.Process.Pid) {
				if name := labtest.CommandName(pid); name == "etcd" || name == "kube-apiserver" {
					held = append(held, pid)
				}
			}
			if len(held) != 2 {
				t.Fatalf("lab holds %d control-plane processes (%v), want etcd and kube-apiserver", len(held), held)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			deadline := time.Now().Add(30 * time.Second)
			for _, pid := range held {
				for labtest.Alive(pid) && time.Now().Before(deadline) {
					time.Sleep(50 * time.Millisecond)
				}
				if labtest.Alive(pid) {
					t.Errorf("%s (pid %d) outlived lab after %s", labtest.CommandName(pid), pid, sig)
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
	}
}

// waitForLine fails t unless a line of r holds want within timeout.
func waitForLine(t *testing.T, r io.Reader, want string, timeout time.Duration) {
	t.Helper()
	if err := labtest.WaitForLine(r, want, timeout); err != nil {
		t.Fatal(err)
	}
}

func TestEnvUpStatusKubeconfigDown(t *testing.T) {
	state := t.TempDir()
	if out, errOut, code := runLab(t, state, "env", "status"); code != 3 || !strings.Contains(out, "no lab env control plane is running") {
		t.Fatalf("status before up: code %d, out %q, err %q", code, out, errOut)
	}
	out, errOut, code := runLab(t, state, "env", "up")
	if code != 0 {
		t.Fatalf("env up: code %d\n%s\n%s", code, out, errOut)
	}
	defer runLab(t, state, "env", "down")
	if !strings.Contains(out, "Kubernetes v1.37.2") {
		t.Errorf("env up output does not name the Kubernetes version:\n%s", out)
	}
	out, _, code = runLab(t, state, "env", "status")
	if code != 0 || !strings.Contains(out, "pid ") {
		t.Fatalf("status while up: code %d, out %q", code, out)
	}
	out, _, code = runLab(t, state, "env", "kubeconfig")
	path := strings.TrimSpace(out)
	if code != 0 || filepath.Dir(path) != state {
		t.Fatalf("kubeconfig: code %d, path %q", code, path)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig %s: %v, mode %v; want 0600", path, err, info.Mode())
	}
	if kubectl, err := exec.LookPath(filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")); err == nil {
		got, err := exec.Command(kubectl, "--kubeconfig", path, "get", "crd", "-o", "name").CombinedOutput()
		if err != nil || !strings.Contains(string(got), "databases.") || !strings.Contains(string(got), "helloworlds.") {
			t.Errorf("kubectl get crd: %v\n%s", err, got)
		}
	}
	out, _, code = runLab(t, state, "env", "down")
	if code != 0 || !strings.Contains(out, "stopped") {
		t.Fatalf("down: code %d, out %q", code, out)
	}
	if _, _, code := runLab(t, state, "env", "status"); code != 3 {
		t.Fatalf("status after down: code %d, want 3", code)
	}
}

// TestEnvStatusReportsACorruptStateFile: a state file lab cannot read is
// an error that says how to get rid of it. (Bad command lines are
// testdata/script/bad_input.txtar.)
func TestEnvStatusReportsACorruptStateFile(t *testing.T) {
	state := t.TempDir()
	if err := os.WriteFile(filepath.Join(state, "state.json"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runLab(t, state, "env", "status")
	if code == 0 || !strings.Contains(errOut, "corrupt") || !strings.Contains(errOut, "lab env down") {
		t.Errorf("status with a corrupt state file: code %d, stderr %q", code, errOut)
	}
}

func TestSetupFindsTheStoreTheSecondTime(t *testing.T) {
	start := time.Now()
	out, errOut, code := runLab(t, t.TempDir(), "setup", "--print-path")
	if code != 0 {
		t.Fatalf("setup: code %d\n%s", code, errOut)
	}
	dir := strings.TrimSpace(out)
	for _, name := range []string{"etcd", "kube-apiserver", "kubectl"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("setup --print-path printed %q, which lacks %s", dir, name)
		}
	}
	if strings.Count(out, "\n") != 1 {
		t.Errorf("--print-path printed more than the path: %q", out)
	}
	t.Logf("lab setup with binaries in place took %s", time.Since(start))
}
