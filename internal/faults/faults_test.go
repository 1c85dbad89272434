package faults

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/internal/proc"
)

var (
	// suiteCache is lab's cache (check build folders) for every case, so
	// the check cases share one build.
	suiteCache string
	// sharedState is the state folder of the suite's `lab env up`, for
	// the cases that may share a control plane.
	sharedState string
	// seed makes the random points reproducible (LAB_FAULT_SEED).
	seed uint64
	// goCache is the go command's build cache, shared with the user's.
	goCache string
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	seed = uint64(time.Now().UnixNano())
	if s := os.Getenv("LAB_FAULT_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	fmt.Printf("fault suite seed %d (rerun with LAB_FAULT_SEED=%d)\n", seed, seed)
	defer labtest.RemoveBinary()
	var err error
	if goCache, err = labtest.UserGoCache(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	bin, err := labtest.Binary()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dirs := map[*string]string{&suiteCache: "lab-faults-cache-", &sharedState: "lab-faults-state-"}
	for v, prefix := range dirs {
		if *v, err = os.MkdirTemp("", prefix); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer func() { _ = os.RemoveAll(*v) }()
	}
	envTmp, err := os.MkdirTemp("", "lab-faults-tmp-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(envTmp) }()

	// The shared control plane, as `lab env up` keeps it; a child of this
	// test process that dies with it.
	env := exec.Command(bin, "env", "up", "--foreground")
	env.Env = append(os.Environ(), "LAB_STATE_DIR="+sharedState, "TMPDIR="+envTmp, "XDG_CACHE_HOME="+suiteCache, "GOCACHE="+goCache)
	env.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	env.Stderr = os.Stderr
	stdout, err := env.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := env.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		_ = env.Process.Signal(syscall.SIGTERM)
		_ = env.Wait()
	}()
	if err := labtest.WaitForLine(stdout, "running until interrupted", 3*time.Minute); err != nil {
		fmt.Fprintln(os.Stderr, "lab env up:", err)
		return 1
	}
	return m.Run()
}

// rng is the case's random source, from the suite seed and the case name.
func rng(t *testing.T) *rand.Rand {
	var h uint64
	for _, b := range []byte(t.Name()) {
		h = h*31 + uint64(b)
	}
	return rand.New(rand.NewPCG(seed, h))
}

// TestLiveViewEndsOnEverySignal sends SIGINT and SIGTERM, alternately, to
// a live `lab start` 20 times (on the shared control plane) and to `lab
// replay`: each time lab exits within 5 s, prints no stack trace, leaves
// no process and no temp folder, and the workspace stays as it was.
func TestLiveViewEndsOnEverySignal(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws")
	var before labtest.Snapshot
	for i := range 20 {
		sig := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}[i%2]
		c := newCase(t, sharedState)
		term := c.terminal("start", "3.1", "--dir", ws)
		term.WaitFor(time.Minute, "● LIVE")
		if before == nil {
			before = labtest.TakeSnapshot(t, ws)
		}
		term.signalAndWait(sig)
		c.noProcessesLeft()
		c.noTempLeft()
		if changes := before.Changes(labtest.TakeSnapshot(t, ws)); len(changes) > 0 {
			t.Fatalf("try %d (%v) changed the workspace: %v", i+1, sig, changes)
		}
		term.Kill()
	}

	c := newCase(t, sharedState)
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	if r := c.run("run", "3.1", "--for", "3s", "--record", trace); !fileHasData(trace) {
		t.Fatalf("lab run recorded nothing: %v", r)
	}
	for i := range 6 {
		sig := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}[i%2]
		c := newCase(t, sharedState)
		term := c.terminal("replay", trace)
		term.WaitFor(30*time.Second, "REPLAY")
		term.signalAndWait(sig)
		c.noProcessesLeft()
		c.noTempLeft()
		term.Kill()
	}
}

func fileHasData(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Size() > 0
}

// TestPrivateControlPlaneDiesWithLab ends `lab start` on its own control
// plane by SIGINT, SIGTERM, a closed terminal (SIGHUP) and SIGKILL: etcd and
// kube-apiserver go with it; a killed lab's temp folder (etcd data, keys,
// kubeconfig) is removed by the next lab command.
func TestPrivateControlPlaneDiesWithLab(t *testing.T) {
	for _, how := range []string{"SIGINT", "SIGTERM", "SIGHUP", "SIGKILL"} {
		t.Run(how, func(t *testing.T) {
			c := newCase(t, "")
			term := c.terminal("start", "3.1", "--dir", filepath.Join(t.TempDir(), "ws"))
			term.WaitFor(2*time.Minute, "● LIVE")
			if !c.hasProcess(func(n string) bool { return n == "etcd" }) || !c.hasProcess(func(n string) bool { return n == "kube-apiserver" }) {
				t.Fatalf("no private control plane runs: %s", describe(c.processes()))
			}
			switch how {
			case "SIGINT":
				term.signalAndWait(syscall.SIGINT)
			case "SIGTERM":
				term.signalAndWait(syscall.SIGTERM)
			case "SIGHUP":
				term.Kill() // the terminal closes: lab gets SIGHUP
			case "SIGKILL":
				_ = syscall.Kill(term.labPID(), syscall.SIGKILL)
			}
			c.noProcessesLeft()
			if how == "SIGKILL" {
				c.reapedByNextLab()
			} else {
				c.noTempLeft()
			}
		})
	}
}

// TestCtrlCDuringStartUp presses Ctrl-C in `lab start` at a random point
// of its start-up screen (on its own control plane): lab quits at once,
// with no stack trace, and leaves nothing.
func TestCtrlCDuringStartUp(t *testing.T) {
	r := rng(t)
	for i := range 3 {
		after := time.Duration(r.IntN(3000)+300) * time.Millisecond
		t.Run(fmt.Sprintf("%d-after-%s", i, after), func(t *testing.T) {
			c := newCase(t, "")
			term := c.terminal("start", "3.1", "--dir", filepath.Join(t.TempDir(), "ws"))
			time.Sleep(after)
			term.Keys("C-c")
			waitUntil(t, exitWithin, "lab did not quit on Ctrl-C", func() bool { return fileHasData(term.exitFile) })
			errText, _ := os.ReadFile(term.errFile)
			c.noStackTrace(term.Screen() + string(errText))
			if code, _ := os.ReadFile(term.exitFile); strings.TrimSpace(string(code)) != "0" {
				t.Errorf("Ctrl-C during start-up: exit %s, stderr:\n%s", code, errText)
			}
			c.noProcessesLeft()
			c.noTempLeft()
		})
	}
}

// TestInterruptedStartUp ends `lab run` at random points of its start-up
// (control plane, CRDs, namespace, operator) with a random stop signal.
func TestInterruptedStartUp(t *testing.T) {
	r := rng(t)
	signals := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGKILL}
	// Every signal at least once, from a random first one; the moment is random.
	first := r.IntN(len(signals))
	for i := range 6 {
		sig := signals[(first+i)%len(signals)]
		after := time.Duration(r.IntN(4500)+100) * time.Millisecond
		shared := i%2 == 1
		t.Run(fmt.Sprintf("%d-%v-after-%s-shared-%v", i, sig, after, shared), func(t *testing.T) {
			state := ""
			if shared {
				state = sharedState
			}
			c := newCase(t, state)
			// The dependency stays down, so the run lasts until --for or the signal.
			run := c.start("run", "3.1", "--set", "external=down", "--for", "30s")
			time.Sleep(after)
			res := c.signalAndWait(run, sig)
			c.noProcessesLeft()
			if sig == syscall.SIGKILL {
				c.reapedByNextLab()
				return
			}
			c.noTempLeft()
			if res.code == 0 {
				t.Errorf("an interrupted lab run exited 0:\n%v", res)
			}
		})
	}
}

// hangingCode is learner code whose test binary never ends by itself, and
// which starts a detached child. It spawns through a library (spawnerCode,
// a module outside the workspace): lab's source policy refuses os/exec in
// the learner's own files, and what a library does is what the supervisor
// must still clean up.
const hangingCode = `package results

import (
	"time"

	"example.com/spawner"
)

func init() {
	spawner.Detached("sleep", "600")
	time.Sleep(10 * time.Minute)
}
`

// spawnerCode is the library: a module of its own, which the workspace's
// go.mod replaces with a folder outside the workspace.
const spawnerCode = `package spawner

import "os/exec"

// Detached starts name in a session of its own and does not wait for it.
func Detached(name string, args ...string) {
	_ = exec.Command("setsid", append([]string{name}, args...)...).Start()
}
`

// addSpawner writes the spawner module next to the workspace and makes the
// workspace require it.
func addSpawner(t *testing.T, ws string) {
	t.Helper()
	dir := filepath.Join(filepath.Dir(ws), "spawner")
	for name, text := range map[string]string{"go.mod": "module example.com/spawner\n\ngo 1.26\n", "spawner.go": spawnerCode} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gomod := filepath.Join(ws, "go.mod")
	b, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, fmt.Sprintf("\nrequire example.com/spawner v0.0.0\n\nreplace example.com/spawner => %s\n", dir)...)
	if err := os.WriteFile(gomod, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCheckEndsInBuildAndRun ends `lab check` while `go test -c` compiles
// and while the test binaries run (learner code that hangs and spawns a
// detached child), by SIGKILL, SIGHUP and SIGTERM: nothing lab started
// survives it (compilers, test2json, test binaries, the detached child),
// and the workspace, progress included, is unchanged. The check after
// them grades as usual.
func TestCheckEndsInBuildAndRun(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws")
	if r := newCase(t, sharedState).run("init", "3.1", "--dir", ws); r.code != 0 {
		t.Fatalf("lab init: %v", r)
	}
	if err := os.WriteFile(filepath.Join(ws, "results", "zz_hang.go"), []byte(hangingCode), 0o644); err != nil {
		t.Fatal(err)
	}
	addSpawner(t, ws)
	before := labtest.TakeSnapshot(t, ws)
	compiling := func(n string) bool { return n == "compile" || n == "link" || n == "asm" || n == "cgo" }
	testBinary := func(n string) bool { return strings.HasSuffix(n, ".test") }

	cases := []struct {
		phase string
		sig   syscall.Signal
		in    func(string) bool
	}{
		{"build", syscall.SIGKILL, compiling},
		{"build", syscall.SIGHUP, compiling},
		{"run", syscall.SIGKILL, testBinary},
		{"run", syscall.SIGHUP, testBinary},
		{"run", syscall.SIGTERM, testBinary},
	}
	for _, tc := range cases {
		t.Run(tc.phase+"-"+tc.sig.String(), func(t *testing.T) {
			c := newCase(t, sharedState)
			check := c.start("check", "--dir", ws, "--exercise", "results")
			waitUntil(t, 5*time.Minute, "the check never reached its "+tc.phase+" phase", func() bool {
				select {
				case <-check.done:
					t.Fatalf("the check ended before its %s phase:\n%s", tc.phase, check.errOut.String())
				default:
				}
				return c.hasProcess(tc.in)
			})
			if tc.phase == "run" {
				// The learner's detached child has started too.
				waitUntil(t, 30*time.Second, "no detached child", func() bool {
					return c.hasProcess(func(n string) bool { return n == "sleep" })
				})
			}
			c.signalAndWait(check, tc.sig)
			c.noProcessesLeft()
			if tc.sig == syscall.SIGKILL {
				c.reapedByNextLab()
			} else {
				c.noTempLeft()
			}
			if changes := before.Changes(labtest.TakeSnapshot(t, ws)); len(changes) > 0 {
				t.Fatalf("the killed check changed the workspace: %v", changes)
			}
		})
	}

	// Without the hang, the next check grades the exercise.
	if err := os.Remove(filepath.Join(ws, "results", "zz_hang.go")); err != nil {
		t.Fatal(err)
	}
	c := newCase(t, sharedState)
	r := c.run("check", "--dir", ws, "--exercise", "results")
	if !strings.Contains(r.out+r.errOut, "failed") {
		t.Fatalf("the starter code was not graded failed after the kills:\n%v", r)
	}
	c.noProcessesLeft()
	c.noTempLeft()
}

// TestMineEndsOnSignals ends `lab start --mine` while it builds the
// learner's controller (SIGINT) and while it runs it (SIGTERM).
func TestMineEndsOnSignals(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws")
	for _, tc := range []struct {
		when string
		sig  syscall.Signal
	}{{"build", syscall.SIGINT}, {"live", syscall.SIGTERM}} {
		t.Run(tc.when, func(t *testing.T) {
			c := newCase(t, sharedState)
			term := c.terminal("start", "3.1", "--mine", "--dir", ws)
			if tc.when == "build" {
				waitUntil(t, time.Minute, "no build started", func() bool {
					return c.hasProcess(func(n string) bool { return n == "go" || n == "compile" || n == "link" })
				})
			} else {
				term.WaitFor(5*time.Minute, "● LIVE")
			}
			term.signalAndWait(tc.sig)
			c.noProcessesLeft()
			c.noTempLeft()
			term.Kill()
		})
	}
}

// TestConcurrentEnvUp starts two `lab env up` at once: one control plane
// runs, both name it, and `lab env down` leaves nothing.
func TestConcurrentEnvUp(t *testing.T) {
	c := newCase(t, "")
	a, b := c.start("env", "up"), c.start("env", "up")
	<-a.done
	<-b.done
	for _, s := range []*started{a, b} {
		if s.cmd.ProcessState.ExitCode() != 0 {
			t.Fatalf("lab env up failed:\n%s%s", s.out.String(), s.errOut.String())
		}
		c.noStackTrace(s.out.String() + s.errOut.String())
	}
	etcds := 0
	for _, pid := range c.processes() {
		if args := proc.CommandLine(pid); len(args) > 0 && filepath.Base(args[0]) == "etcd" {
			etcds++
		}
	}
	if etcds != 1 {
		t.Errorf("%d control planes run after two concurrent `lab env up`, want 1:\n  %s", etcds, describe(c.processes()))
	}
	pidOf := func(s *started) string { return pidPattern.FindString(s.out.String() + s.errOut.String()) }
	if pidOf(a) == "" || pidOf(a) != pidOf(b) {
		t.Errorf("the two `lab env up` name different control planes: %q and %q", pidOf(a), pidOf(b))
	}
	if r := c.run("env", "down"); r.code != 0 {
		t.Fatalf("lab env down: %v", r)
	}
	c.noProcessesLeft()
}

var pidPattern = regexp.MustCompile(`pid \d+`)

// TestForgedAndBrokenState feeds lab state it did not write, or that broke
// under it: each gives a clear message and a non-zero exit, no stack trace,
// and signals nothing that is not lab's.
func TestForgedAndBrokenState(t *testing.T) {
	t.Run("state names a live process that is not lab", func(t *testing.T) {
		c := newCase(t, "")
		victim := exec.Command("sleep", "600")
		if err := victim.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = victim.Process.Kill(); _ = victim.Wait() })
		pid := victim.Process.Pid
		for _, state := range []string{
			fmt.Sprintf(`{"version":1,"pid":%d,"host":"https://127.0.0.1:1","kubeconfig":"/nonexistent"}`, pid),
			fmt.Sprintf(`{"version":1,"pid":%d,"host":"https://127.0.0.1:1","kubeconfig":"/nonexistent","processStart":%q}`, pid, proc.StartTime(pid)),
		} {
			writeState(t, c, state)
			status := c.run("env", "status")
			if strings.Contains(status.out, fmt.Sprintf("pid %d", pid)) {
				t.Errorf("lab env status takes a stranger (pid %d) for its control plane:\n%v", pid, status)
			}
			writeState(t, c, state)
			c.run("env", "down")
			if !labtest.Alive(pid) {
				t.Fatalf("lab env down killed pid %d, which is not lab's (state %s)", pid, state)
			}
		}
		// `lab env up` starts a control plane of its own instead.
		writeState(t, c, fmt.Sprintf(`{"version":1,"pid":%d,"host":"https://127.0.0.1:1","kubeconfig":"/nonexistent"}`, pid))
		up := c.run("env", "up")
		if up.code != 0 || strings.Contains(up.out+up.errOut, fmt.Sprintf("pid %d", pid)) {
			t.Fatalf("lab env up over a forged state: want its own control plane:\n%v", up)
		}
		if down := c.run("env", "down"); down.code != 0 || !labtest.Alive(pid) {
			t.Fatalf("lab env down: %v (stranger alive: %v)", down, labtest.Alive(pid))
		}
		c.noProcessesLeft()
	})
	t.Run("garbage state file", func(t *testing.T) {
		c := newCase(t, "")
		writeState(t, c, "{ not json")
		for _, args := range [][]string{{"run", "3.1", "--for", "1s"}, {"start", "3.1", "--plain", "--dir", filepath.Join(t.TempDir(), "ws")}} {
			r := c.run(args...)
			if r.code == 0 || !strings.Contains(r.errOut, "lab env down") {
				t.Errorf("lab %v with a corrupt state file: want a non-zero exit that says `lab env down`:\n%v", args, r)
			}
		}
		c.noProcessesLeft()
		c.noTempLeft()
	})
	t.Run("missing kubeconfig", func(t *testing.T) {
		c := newCase(t, "")
		r := c.run("run", "3.1", "--for", "1s", "--kubeconfig", "/nonexistent/kubeconfig")
		if r.code == 0 || !strings.Contains(r.errOut, "/nonexistent/kubeconfig") {
			t.Errorf("want a non-zero exit naming the missing kubeconfig:\n%v", r)
		}
		c.noTempLeft()
	})
	t.Run("env kubeconfig deleted under a running env", func(t *testing.T) {
		c := newCase(t, "")
		if r := c.run("env", "up"); r.code != 0 {
			t.Fatalf("lab env up: %v", r)
		}
		t.Cleanup(func() { c.run("env", "down") })
		if err := os.Remove(filepath.Join(c.stateDir, "kubeconfig")); err != nil {
			t.Fatal(err)
		}
		r := c.run("run", "3.1", "--for", "1s")
		if r.code == 0 || !strings.Contains(r.errOut, "kubeconfig") {
			t.Errorf("want a non-zero exit about the missing kubeconfig:\n%v", r)
		}
	})
	t.Run("corrupt kube-apiserver", func(t *testing.T) {
		c := newCase(t, "")
		assets := copyAssets(t)
		if err := os.Truncate(filepath.Join(assets, "kube-apiserver"), 1<<20); err != nil {
			t.Fatal(err)
		}
		cmd := c.command("run", "3.1", "--for", "1s")
		cmd.Env = append(cmd.Env, "KUBEBUILDER_ASSETS="+assets)
		out, _ := cmd.CombinedOutput()
		c.noStackTrace(string(out))
		if cmd.ProcessState.ExitCode() == 0 || !strings.Contains(string(out), "--from-source") {
			t.Errorf("want a non-zero exit that says how to rebuild the binaries (--from-source):\n%s", out)
		}
		c.noProcessesLeft()
		c.noTempLeft()
	})
	t.Run("negative hint count in progress", func(t *testing.T) {
		c := newCase(t, "")
		ws := filepath.Join(t.TempDir(), "ws")
		if r := c.run("init", "3.1", "--dir", ws); r.code != 0 {
			t.Fatalf("lab init: %v", r)
		}
		progress := `{"version":1,"lab":"3.1","exercises":{"results":{"status":"fail","hintsShown":-5}}}`
		if err := os.WriteFile(filepath.Join(ws, ".lab", "progress.json"), []byte(progress), 0o600); err != nil {
			t.Fatal(err)
		}
		if r := c.run("hint", "results", "--dir", ws); r.code != 0 {
			t.Errorf("lab hint with a negative hint count: %v", r)
		}
	})
}

func writeState(t *testing.T, c *labCase, content string) {
	t.Helper()
	if err := os.MkdirAll(c.stateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.stateDir, "state.json"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// copyAssets copies the control-plane binaries, for a case to break.
func copyAssets(t *testing.T) string {
	t.Helper()
	src := os.Getenv("KUBEBUILDER_ASSETS")
	if src == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run the suite through `make test`")
	}
	dst := t.TempDir()
	for _, name := range []string{"etcd", "kube-apiserver", "kubectl"} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, name), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestControlPlaneGoneUnderTheLiveView stops the shared control plane
// under a live `lab start`: the view stops saying LIVE and says what
// happened, `lab env down` warns that a session uses it, and quitting
// then is a clean exit.
func TestControlPlaneGoneUnderTheLiveView(t *testing.T) {
	c := newCase(t, "")
	if r := c.run("env", "up"); r.code != 0 {
		t.Fatalf("lab env up: %v", r)
	}
	term := c.terminal("start", "3.1", "--dir", filepath.Join(t.TempDir(), "ws"))
	term.WaitFor(time.Minute, "● LIVE")
	down := c.run("env", "down")
	if down.code != 0 || !strings.Contains(down.out+down.errOut, "warning") {
		t.Errorf("lab env down under a live session: want a warning that a session uses it:\n%v", down)
	}
	screen := term.WaitFor(15*time.Second, "NO CONTROL PLANE", "stopped answering")
	if strings.Contains(screen, "● LIVE") {
		t.Errorf("the view still says LIVE without a control plane:\n%s", screen)
	}
	term.Keys("q")
	waitUntil(t, exitWithin, "lab did not quit", func() bool { return fileHasData(term.exitFile) })
	if code, _ := os.ReadFile(term.exitFile); strings.TrimSpace(string(code)) != "0" {
		errText, _ := os.ReadFile(term.errFile)
		t.Errorf("quitting after the control plane went: exit %s, stderr:\n%s", code, errText)
	}
	c.noProcessesLeft()
	c.noTempLeft()
}
