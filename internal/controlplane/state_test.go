package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/internal/proc"
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

func itoa(n int) string { return strconv.Itoa(n) }

// writeAttachment registers a as registerAttachment would.
func writeAttachment(t *testing.T, dir string, a attachment) {
	t.Helper()
	data, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	adir := filepath.Join(dir, attachedDirName)
	if err := os.MkdirAll(adir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(adir, itoa(a.PID)+"-test.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// startProcess starts args as a process that is not lab's control plane,
// killed when the test ends, and returns its PID.
func startProcess(t *testing.T, args ...string) int {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// Wait until the kernel shows the final command line (after exec).
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if got := proc.CommandLine(cmd.Process.Pid); len(got) == len(args) && got[len(got)-1] == args[len(args)-1] {
			break
		}
	}
	return cmd.Process.Pid
}

func plantState(t *testing.T, pid int, processStart string) {
	t.Helper()
	if err := writeState(State{Version: stateVersion, PID: pid, Host: "https://127.0.0.1:1",
		Kubeconfig: "/nonexistent", ProcessStart: processStart}); err != nil {
		t.Fatal(err)
	}
}

func TestReadStateAndDownNeverTrustAProcessThatIsNotLabs(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("LAB_STATE_DIR", dir)
	sleeper := startProcess(t, "sleep", "60")
	// sh keeps running (two commands), with "env up --foreground" in its argv.
	lookalike := startProcess(t, "sh", "-c", "sleep 60; :", "env", "up", "--foreground")
	cases := []struct {
		name         string
		pid          int
		processStart string
	}{
		{"no process start time", sleeper, ""},
		{"another process's start time", sleeper, "1"},
		{"a live process that is not lab env up", sleeper, proc.StartTime(sleeper)},
		{"an env up --foreground look-alike without the lock", lookalike, proc.StartTime(lookalike)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plantState(t, c.pid, c.processStart)
			if st, err := ReadState(); !errors.Is(err, ErrNotRunning) || !strings.Contains(err.Error(), "stale") {
				t.Fatalf("ReadState = %+v, %v; want ErrNotRunning naming a stale state", st, err)
			}
			if _, err := os.Stat(filepath.Join(dir, stateFileName)); !os.IsNotExist(err) {
				t.Fatalf("the stale state file was not removed (%v)", err)
			}
			plantState(t, c.pid, c.processStart)
			var out strings.Builder
			if err := Down(context.Background(), &out); !errors.Is(err, ErrNotRunning) {
				t.Fatalf("Down = %v (out %q), want ErrNotRunning", err, out.String())
			}
			time.Sleep(50 * time.Millisecond)
			if !proc.Alive(c.pid, proc.StartTime(c.pid)) {
				t.Fatalf("Down signalled process %d, which is not lab's", c.pid)
			}
		})
	}

	// While the lock is held (by a `lab env up` that is starting; a lock
	// is per open file, so this test's own conflicts with its probes), a
	// state naming another process is not believed either, and is left for
	// the lock holder to replace.
	unlock, err := lockServe(context.Background(), dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	plantState(t, sleeper, proc.StartTime(sleeper))
	if _, err := ReadState(); !errors.Is(err, ErrNotRunning) || !strings.Contains(err.Error(), "starting") {
		t.Fatalf("ReadState with the lock held by a starting server: %v", err)
	}
	if err := Down(context.Background(), &strings.Builder{}); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Down with the lock held by a starting server: %v", err)
	}
	if !proc.Alive(sleeper, proc.StartTime(sleeper)) {
		t.Fatal("Down signalled a process that is not lab's")
	}
	if _, err := os.Stat(filepath.Join(dir, stateFileName)); err != nil {
		t.Fatalf("the state file of a starting server was removed: %v", err)
	}
	unlock()
}

func TestIsServeCommand(t *testing.T) {
	for args, want := range map[string]bool{
		"/usr/local/bin/lab env up --foreground":     true,
		"lab --lang ru env up --foreground":          true,
		"lab env up":                                 false,
		"sleep 1000":                                 false,
		"env up --foreground":                        false, // argv[0] is the program
		"lab up --foreground env":                    true,
		"--foreground":                               false,
		"/bin/sh -c lab env up --foreground-nothing": false,
	} {
		if got := isServeCommand(strings.Fields(args)); got != want {
			t.Errorf("isServeCommand(%q) = %v, want %v", args, got, want)
		}
	}
}

func TestStateFilesArePrivateAndNeverFollowPlantedLinks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "env")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil { // whatever the umask
		t.Fatal(err)
	}
	t.Setenv("LAB_STATE_DIR", dir)
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, "state.json.tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, "."+stateFileName+".tmp-1")); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, kubeconfigFileName)
	if err := os.WriteFile(kubeconfig, []byte("old"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(kubeconfig, 0o666); err != nil {
		t.Fatal(err)
	}

	plantState(t, 999999, "")
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("state directory: %v, mode %v; want 0700", err, info.Mode().Perm())
	}
	if data, _ := os.ReadFile(victim); string(data) != "precious" {
		t.Fatalf("writing the state followed a planted symlink: the victim now holds %q", data)
	}
	info, err := os.Lstat(filepath.Join(dir, stateFileName))
	if err != nil || !info.Mode().IsRegular() || info.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v, mode %v; want a regular 0600 file", err, info.Mode())
	}
	if err := writePrivateFile(kubeconfig, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(kubeconfig); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig rewritten with mode %v (%v), want 0600", info.Mode().Perm(), err)
	}

	// A state directory that is a symlink, or someone else's, is refused.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LAB_STATE_DIR", link)
	if _, err := ReadState(); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("ReadState in a symlinked state directory: %v, want a refusal", err)
	}
	if os.Getuid() == 0 {
		foreign := filepath.Join(t.TempDir(), "foreign")
		if err := os.Mkdir(foreign, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(foreign, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		t.Setenv("LAB_STATE_DIR", foreign)
		if _, err := Ensure(context.Background(), Options{}); err == nil || !strings.Contains(err.Error(), "another user") {
			t.Fatalf("Ensure with a state directory of another user: %v, want a refusal", err)
		}
	}
}

func TestServeHardensTheStateDirAndRemovesItsKubeconfigOnStop(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "env")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LAB_STATE_DIR", dir)
	kubeconfig := filepath.Join(dir, kubeconfigFileName)
	if err := os.WriteFile(kubeconfig, []byte("planted"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(kubeconfig, 0o666); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan *State, 1)
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, Options{}, func(st *State) { ready <- st }) }()
	select {
	case st := <-ready:
		if st.Kubeconfig != kubeconfig {
			t.Errorf("state names kubeconfig %s, want %s", st.Kubeconfig, kubeconfig)
		}
	case err := <-served:
		t.Fatalf("Serve: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("Serve did not become ready")
	}
	if info, _ := os.Stat(dir); info.Mode().Perm() != 0o700 {
		t.Errorf("state directory mode %v while serving, want 0700", info.Mode().Perm())
	}
	info, err := os.Stat(kubeconfig)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig while serving: %v, mode %v; want 0600", err, info.Mode().Perm())
	}
	if data, _ := os.ReadFile(kubeconfig); strings.Contains(string(data), "planted") {
		t.Fatal("the planted kubeconfig was kept")
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve returned %v", err)
	}
	for _, name := range []string{kubeconfigFileName, stateFileName} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s left in the state directory after a clean stop (%v)", name, err)
		}
	}
}

func TestTwoServesAtOnceStartOneControlPlane(t *testing.T) {
	t.Setenv("LAB_STATE_DIR", t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		started bool // Start was called (it reports its steps)
		err     error
	}
	results := make(chan result, 2)
	ready := make(chan *State, 2)
	var wg sync.WaitGroup
	begin := make(chan struct{})
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mu sync.Mutex
			started := false
			opts := Options{Progress: func(Step) { mu.Lock(); started = true; mu.Unlock() }}
			<-begin
			err := Serve(ctx, opts, func(st *State) { ready <- st })
			mu.Lock()
			defer mu.Unlock()
			results <- result{started, err}
		}()
	}
	close(begin)
	var st *State
	select {
	case st = <-ready:
	case <-time.After(2 * time.Minute):
		t.Fatal("no Serve became ready")
	}
	select {
	case r := <-results:
		if !errors.Is(r.err, ErrAlreadyServing) || r.started {
			t.Fatalf("the second Serve: started %v, err %v; want ErrAlreadyServing without starting", r.started, r.err)
		}
		if !strings.Contains(r.err.Error(), "already running") {
			t.Errorf("the second Serve says %q", r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the second Serve did not give up")
	}
	select {
	case st2 := <-ready:
		t.Fatalf("two control planes became ready: %s and %s", st.Host, st2.Host)
	default:
	}
	if got, err := ReadState(); err != nil || got.Host != st.Host {
		t.Fatalf("ReadState = %+v, %v; want the ready one", got, err)
	}
	cancel()
	wg.Wait()
	if r := <-results; r.err != nil {
		t.Fatalf("the serving Serve returned %v", r.err)
	}
	// Nothing serves now: the lock is free.
	if serveLockHeld(os.Getenv("LAB_STATE_DIR")) {
		t.Fatal("the serve lock is still held after Serve returned")
	}
}

func TestStartNamesABrokenBinaryAndTheFix(t *testing.T) {
	t.Setenv("LAB_STATE_DIR", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	good, err := Setup(ctx, SetupOptions{})
	if err != nil {
		t.Fatal(err)
	}
	real, err := os.ReadFile(good.Path("kube-apiserver"))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"truncated to 1 MB":         real[:1<<20],
		"a text file marked +x":     []byte("this is not a program\n"),
		"a script that cannot exec": []byte("#!/nonexistent/interpreter\n"),
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			assets := t.TempDir()
			for _, n := range []string{"etcd", "kubectl"} {
				if err := os.Symlink(good.Path(n), filepath.Join(assets, n)); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(assets, "kube-apiserver"), content, 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("KUBEBUILDER_ASSETS", assets)
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp) // a failed start must leave nothing behind
			cp, err := Start(ctx, Options{})
			if err == nil {
				_ = cp.Stop()
				t.Fatal("Start succeeded with a broken kube-apiserver")
			}
			if !contains(err.Error(), "kube-apiserver in "+assets+" is broken", "lab setup --from-source") {
				t.Fatalf("Start error does not name the broken binary and the fix:\n%v", err)
			}
			if errors.Unwrap(err) == nil {
				t.Fatalf("Start error wraps nothing: %v", err)
			}
			if left, _ := os.ReadDir(tmp); len(left) > 0 {
				t.Errorf("the failed start left %s in the temp folder", left[0].Name())
			}
			t.Log(err)
		})
	}
}

func TestDownWarnsAboutAttachedSessionsAndDoesNotWaitLong(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("LAB_STATE_DIR", dir)
	bin := labBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	st, err := Up(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = syscall.Kill(st.PID, syscall.SIGKILL)
		}
	}()

	// Ensure registers this process; Stop removes the registration and
	// leaves the shared control plane running.
	cp, err := Ensure(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !cp.Shared {
		t.Fatal("Ensure did not attach to the shared control plane")
	}
	regs, _ := filepath.Glob(filepath.Join(dir, attachedDirName, "*.json"))
	if len(regs) != 1 {
		t.Fatalf("registrations after Ensure: %v, want one", regs)
	}
	if info, err := os.Stat(regs[0]); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("registration %s: %v, mode %v; want 0600", regs[0], err, info.Mode().Perm())
	}
	if err := cp.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(regs[0]); !os.IsNotExist(err) {
		t.Fatalf("Stop left the registration %s (%v)", regs[0], err)
	}
	if _, err := ReadState(); err != nil {
		t.Fatalf("Stop of an attached control plane stopped it: %v", err)
	}

	// Two live sessions (this process and a child), and one that died.
	cp, err = Ensure(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cp.Stop() }()
	other := startProcess(t, "sleep", "60")
	for _, a := range []attachment{
		{PID: other, ProcessStart: proc.StartTime(other), ServerPID: st.PID, ServerStart: st.ProcessStart},
		{PID: 999999, ProcessStart: "1", ServerPID: st.PID, ServerStart: st.ProcessStart},
	} {
		writeAttachment(t, dir, a)
	}
	// A watch keeps kube-apiserver from stopping at once on SIGTERM.
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go func() {
		cmd := exec.CommandContext(watchCtx, filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl"),
			"--kubeconfig", st.Kubeconfig, "get", "namespaces", "--watch")
		_ = cmd.Run()
	}()
	time.Sleep(time.Second)

	var out strings.Builder
	start := time.Now()
	if err := Down(ctx, &out); err != nil {
		t.Fatal(err)
	}
	stopped = true
	took := time.Since(start)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if !strings.Contains(lines[0], "warning: 2 lab sessions use this control plane") || !contains(lines[0], "pids ", itoa(os.Getpid()), itoa(other)) {
		t.Fatalf("Down did not warn first about the two sessions:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "stopped the control plane") {
		t.Fatalf("Down output:\n%s", out.String())
	}
	if limit := downGrace + 5*time.Second; took > limit {
		t.Errorf("Down took %s with a watch open, want under %s", took, limit)
	}
	t.Logf("Down took %s: %s", took, out.String())
	if proc.Alive(st.PID, st.ProcessStart) {
		t.Fatal("the serving process still runs after Down")
	}
	regs, _ = filepath.Glob(filepath.Join(dir, attachedDirName, "*.json"))
	for _, r := range regs {
		if strings.HasPrefix(filepath.Base(r), "999999-") {
			t.Errorf("Down kept the registration of a dead process: %s", r)
		}
	}
	for _, name := range []string{kubeconfigFileName, stateFileName} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s left in the state directory after Down (%v)", name, err)
		}
	}
}
