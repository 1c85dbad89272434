//go:build linux

package proc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperParentEnv makes the test binary act as a lab that starts a
// supervised tree and waits to be killed (TestTreeDiesWithItsParent).
const helperParentEnv = "PROC_TEST_PARENT_MARKER"

func TestMain(m *testing.M) {
	if code, ok := RunIfSupervisor(); ok {
		os.Exit(code)
	}
	if marker := os.Getenv(helperParentEnv); marker != "" {
		cmd := Command(context.Background(), "sh", "-c", treeScript(marker))
		if err := cmd.Start(); err != nil {
			fmt.Println("start:", err)
			os.Exit(1)
		}
		fmt.Println("started")
		_ = cmd.Wait()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// treeScript starts a tree the way learner code can: a child in the
// background, and one that left the process group and session (setsid),
// both sleeping for marker seconds.
func treeScript(marker string) string {
	return fmt.Sprintf("sleep %s & setsid sleep %s & sleep %s", marker, marker, marker)
}

// newMarker is a sleep duration no other process on the machine uses, so
// the test finds its own processes by command line.
func newMarker() string { return fmt.Sprintf("300.%09d", rand.IntN(1e9)) }

// withMarker lists the living processes whose command line holds marker.
func withMarker(marker string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := statFields(pid); len(f) > 0 && f[0] == "Z" {
			continue
		}
		if strings.Contains(strings.Join(CommandLine(pid), " "), marker) {
			out = append(out, pid)
		}
	}
	return out
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func killMarked(marker string) {
	for _, p := range withMarker(marker) {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}

func TestCommandIsSupervised(t *testing.T) {
	cmd := Command(context.Background(), "true")
	if filepath.Base(cmd.Path) == "true" {
		t.Fatalf("Command ran %s directly; the supervisor should start it", cmd.Path)
	}
}

func TestCancelKillsTheWholeTree(t *testing.T) {
	marker := newMarker()
	t.Cleanup(func() { killMarked(marker) })
	ctx, cancel := context.WithCancel(context.Background())
	cmd := Command(ctx, "sh", "-c", treeScript(marker))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the tree did not start", 5*time.Second, func() bool { return len(withMarker(marker)) >= 4 })
	cancel()
	_ = cmd.Wait()
	if left := withMarker(marker); len(left) > 0 {
		t.Fatalf("processes outlived the cancelled command: %v", left)
	}
}

// TestKillRightAfterStart kills commands the moment they start, while the
// supervisor may still be starting up and not yet listening for the kill
// request: the program still dies at once instead of running its course.
func TestKillRightAfterStart(t *testing.T) {
	marker := newMarker()
	t.Cleanup(func() { killMarked(marker) })
	for range 20 {
		cmd := Command(context.Background(), "sleep", marker)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := Kill(cmd); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		if took := time.Since(start); took > 4*time.Second {
			t.Fatalf("a command killed right after its start ended after %s", took.Round(time.Millisecond))
		}
		if left := withMarker(marker); len(left) > 0 {
			t.Fatalf("processes outlived the killed command: %v", left)
		}
	}
}

func TestExitingChildTakesItsDescendantsAlong(t *testing.T) {
	marker := newMarker()
	t.Cleanup(func() { killMarked(marker) })
	// The shell exits at once, leaving a detached grandchild that holds
	// stdout — the way a learner's test binary can leave a process behind.
	cmd := Command(context.Background(), "sh", "-c", "setsid sleep "+marker+" & echo started")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v (%s)", err, out)
	}
	if strings.TrimSpace(string(out)) != "started" {
		t.Fatalf("output %q", out)
	}
	if left := withMarker(marker); len(left) > 0 {
		t.Fatalf("a grandchild outlived its command: %v", left)
	}
}

func TestExitCodeIsThePrograms(t *testing.T) {
	err := Command(context.Background(), "sh", "-c", "exit 3").Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("err = %v, want exit status 3", err)
	}
	// A program killed by a signal looks killed through the supervisor too.
	if err := Command(context.Background(), "sh", "-c", "kill -KILL $$").Run(); err == nil || err.Error() != "signal: killed" {
		t.Fatalf("err = %v, want signal: killed", err)
	}
	if err := Command(context.Background(), "no-such-program-here").Start(); err == nil {
		t.Fatal("starting a missing program succeeded")
	}
}

func TestTreeDiesWithItsParent(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			marker := newMarker()
			t.Cleanup(func() { killMarked(marker) })
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			parent := exec.Command(self)
			parent.Env = append(os.Environ(), helperParentEnv+"="+marker)
			stdout, _ := parent.StdoutPipe()
			if err := parent.Start(); err != nil {
				t.Fatal(err)
			}
			if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "started\n" {
				t.Fatalf("helper said %q", line)
			}
			waitFor(t, "the tree did not start", 5*time.Second, func() bool { return len(withMarker(marker)) >= 4 })
			_ = parent.Process.Signal(sig)
			_ = parent.Wait()
			waitFor(t, fmt.Sprintf("processes outlived their parent: %v", withMarker(marker)), 3*time.Second,
				func() bool { return len(withMarker(marker)) == 0 })
		})
	}
}

func TestPrivateTempDir(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	t.Setenv(TempRootEnv, root)
	t.Setenv("TMPDIR", os.Getenv("TMPDIR"))
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	// A folder of a process that is gone, one of a living process (this
	// one), and something that is not lab's.
	dead := filepath.Join(root, "999999999-12345-abc")
	alive := filepath.Join(root, fmt.Sprintf("%d-%s-old", os.Getpid(), StartTime(os.Getpid())))
	other := filepath.Join(root, "notes")
	for _, d := range []string{dead, alive, other} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	dir, cleanup, err := UsePrivateTempDir()
	if err != nil {
		t.Fatal(err)
	}
	if os.TempDir() != dir || filepath.Dir(dir) != root {
		t.Fatalf("TMPDIR %s, dir %s: want a folder in %s", os.TempDir(), dir, root)
	}
	fi, _ := os.Stat(root)
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("root mode %v, want 0700", fi.Mode().Perm())
	}
	for d, want := range map[string]bool{dead: false, alive: true, other: true, dir: true} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s exists=%v, want %v", d, err == nil, want)
		}
	}
	cleanup()
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("cleanup left %s", dir)
	}
}

func TestTempRootMustBeOurs(t *testing.T) {
	base := t.TempDir()
	target := filepath.Join(base, "elsewhere")
	if err := os.Mkdir(target, 0o777); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "root")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	t.Setenv(TempRootEnv, link)
	t.Setenv("TMPDIR", os.Getenv("TMPDIR"))
	if _, _, err := UsePrivateTempDir(); err == nil || !strings.Contains(err.Error(), "not a folder of your own") {
		t.Fatalf("err = %v, want a refusal of the symlinked root", err)
	}
}

func TestAliveNeedsTheStartTime(t *testing.T) {
	pid := os.Getpid()
	if !Alive(pid, StartTime(pid)) {
		t.Fatal("this process is not alive")
	}
	if Alive(pid, "") || Alive(pid, "1") {
		t.Fatal("Alive accepted a missing or wrong start time")
	}
}

// BenchmarkSupervisedRun is the cost of supervision per child: compare it
// with BenchmarkDirectRun, the same program started without a supervisor.
// This test binary is the supervisor here; lab's own binary, with the
// package initialisation of client-go and controller-runtime, starts slower.
func BenchmarkSupervisedRun(b *testing.B) {
	for b.Loop() {
		if err := Command(context.Background(), "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDirectRun(b *testing.B) {
	for b.Loop() {
		cmd := exec.CommandContext(context.Background(), "true")
		directAttrs(cmd)
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}
