package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/discovery"

	"github.com/operator-lab/lab/internal/proc"
)

// stateVersion is bumped when State changes incompatibly.
const stateVersion = 1

// State describes the control plane that `lab env up` keeps running in the
// background. It lives in the state directory (see StateDir).
type State struct {
	Version           int       `json:"version"`
	PID               int       `json:"pid"`
	Host              string    `json:"host"`
	Kubeconfig        string    `json:"kubeconfig"`
	KubernetesVersion string    `json:"kubernetesVersion"`
	StartedAt         time.Time `json:"startedAt"`
	// ProcessStart is the kernel's start time of PID, so that a PID reused
	// by another process after a crash is not taken for the control plane.
	ProcessStart string `json:"processStart,omitempty"`
}

// ErrCorruptState means the state file exists but cannot be read as State.
var ErrCorruptState = errors.New("control-plane state file is corrupt")

// ErrNotRunning means no `lab env up` control plane is running.
var ErrNotRunning = errors.New("no lab env control plane is running (start one with `lab env up`)")

// ErrAlreadyServing means another process runs, or is starting, the shared
// control plane: Serve does not start a second one.
var ErrAlreadyServing = errors.New("a lab env control plane is already running or starting")

// Files of the state directory.
const (
	stateFileName      = "state.json"
	kubeconfigFileName = "kubeconfig"
	logFileName        = "env.log"
)

// downGrace is how long Down waits for the control plane to stop cleanly
// before it makes its process end at once.
const downGrace = 5 * time.Second

// loadState reads the state file in dir: ErrNotRunning if there is none,
// ErrCorruptState if it cannot be read as State. It proves nothing about
// the process it names.
func loadState(dir string) (*State, error) {
	path := filepath.Join(dir, stateFileName)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNotRunning
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil || st.Version != stateVersion || st.PID <= 0 || st.Kubeconfig == "" {
		detail := "unexpected content"
		if err != nil {
			detail = err.Error()
		}
		return nil, fmt.Errorf("%w: %s (%s); run `lab env down` to clean it up", ErrCorruptState, path, detail)
	}
	return &st, nil
}

// ReadState returns the running shared control plane. The state file is
// believed only when the process it names is proven to serve it (see
// serving). Otherwise it is stale: when nothing holds the serve lock it is
// removed, with the kubeconfig, and either way ErrNotRunning is returned.
func ReadState() (*State, error) {
	dir, err := privateStateDir(false)
	if err != nil {
		return nil, err
	}
	st, err := loadState(dir)
	if errors.Is(err, ErrNotRunning) && serveLockHeld(dir) {
		return nil, fmt.Errorf("%w; another `lab env up` is starting one", err)
	}
	if err != nil {
		return nil, err
	}
	if serving(dir, st) {
		return st, nil
	}
	unlock, err := lockServe(context.Background(), dir, 0)
	if errors.Is(err, errLockHeld) {
		// A `lab env up` is starting and will replace the state file.
		return nil, fmt.Errorf("%w; another `lab env up` is starting one (the state file names process %d, which is not it)", ErrNotRunning, st.PID)
	}
	if err != nil {
		return nil, err
	}
	defer unlock()
	removeServeFiles(dir)
	return nil, fmt.Errorf("%w; removed a stale state file naming process %d, which is not a running lab env", ErrNotRunning, st.PID)
}

// serving reports whether st names the process that serves the shared
// control plane: it runs and started when the state says (a reused PID is
// no proof), it is a `lab env up --foreground` (or this very process, when
// Serve runs in it), and the serve lock is held. No other process is ever
// signalled or reported as running.
func serving(dir string, st *State) bool {
	if !proc.Alive(st.PID, st.ProcessStart) {
		return false
	}
	// No command line to read (no /proc) proves nothing either way; the
	// lock still must be held.
	if args := proc.CommandLine(st.PID); st.PID != os.Getpid() && args != nil && !isServeCommand(args) {
		return false
	}
	return serveLockHeld(dir)
}

// isServeCommand reports whether args are those of `lab env up --foreground`.
func isServeCommand(args []string) bool {
	if len(args) < 2 {
		return false
	}
	rest := args[1:]
	return slices.Contains(rest, "env") && slices.Contains(rest, "up") && slices.Contains(rest, "--foreground")
}

// writeState writes st as the state file, privately (see writePrivateFile).
func writeState(st State) error {
	dir, err := privateStateDir(true)
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the state: %w", err)
	}
	return writePrivateFile(filepath.Join(dir, stateFileName), data)
}

// removeServeFiles deletes the state file and the kubeconfig of dir. Only
// the holder of the serve lock calls it: the files are its own, or stale.
func removeServeFiles(dir string) {
	_ = os.Remove(filepath.Join(dir, stateFileName))
	_ = os.Remove(filepath.Join(dir, kubeconfigFileName))
}

// Serve runs the shared control plane in this process until ctx ends. It
// first takes the serve lock, which it holds until it returns, so that two
// of them never both start one: without the lock it returns
// ErrAlreadyServing. It then starts the control plane, writes its
// kubeconfig and state where other lab commands find them, and on return
// removes both and stops the control plane.
func Serve(ctx context.Context, opts Options, ready func(*State)) error {
	dir, err := privateStateDir(true)
	if err != nil {
		return err
	}
	unlock, err := lockServe(ctx, dir, time.Second)
	if errors.Is(err, errLockHeld) {
		if st, rerr := ReadState(); rerr == nil {
			return fmt.Errorf("%w (pid %d, %s)", ErrAlreadyServing, st.PID, st.Host)
		}
		return fmt.Errorf("%w (another `lab env up` holds %s)", ErrAlreadyServing, filepath.Join(dir, serveLockName))
	}
	if err != nil {
		return err
	}
	defer unlock()
	// Under the lock nothing else serves, so files left behind are stale; a
	// corrupt state file is reported, as everywhere, for `lab env down`.
	if _, err := loadState(dir); errors.Is(err, ErrCorruptState) {
		return err
	}
	removeServeFiles(dir)
	cp, err := Start(ctx, opts)
	if err != nil {
		return err
	}
	err = publishAndWait(ctx, dir, cp, ready)
	// Nobody attaches to a control plane that is stopping, and no admin
	// kubeconfig of a dead server stays behind.
	removeServeFiles(dir)
	if stopErr := cp.Stop(); err == nil {
		err = stopErr
	}
	return err
}

// publishAndWait writes the kubeconfig and the state of cp into dir, calls
// ready, and waits for ctx to end.
func publishAndWait(ctx context.Context, dir string, cp *ControlPlane, ready func(*State)) error {
	data, err := os.ReadFile(cp.KubeconfigPath)
	if err != nil {
		return fmt.Errorf("read the kubeconfig: %w", err)
	}
	kubeconfig := filepath.Join(dir, kubeconfigFileName)
	if err := writePrivateFile(kubeconfig, data); err != nil {
		return err
	}
	pid := os.Getpid()
	st := State{Version: stateVersion, PID: pid, Host: cp.Host, Kubeconfig: kubeconfig,
		KubernetesVersion: cp.KubernetesVersion, StartedAt: cp.StartedAt, ProcessStart: proc.StartTime(pid)}
	if err := writeState(st); err != nil {
		return err
	}
	if ready != nil {
		ready(&st)
	}
	<-ctx.Done()
	return nil
}

// Up starts `exe env up --foreground` detached from this terminal, so the
// control plane outlives the command, and waits until a control plane is
// ready. That is usually the one it started; when another `lab env up`
// started at the same moment won the serve lock, it is that one (both
// commands then report the same process).
func Up(ctx context.Context, exe string) (*State, error) {
	if st, err := ReadState(); err == nil {
		return st, nil
	} else if !errors.Is(err, ErrNotRunning) {
		return nil, err
	}
	dir, err := privateStateDir(true)
	if err != nil {
		return nil, err
	}
	// Each child logs to a file of its own; the winner's becomes env.log.
	logFile, err := os.CreateTemp(dir, "env-*.log")
	if err != nil {
		return nil, fmt.Errorf("create a log file in %s: %w", dir, err)
	}
	defer logFile.Close()
	logPath := filepath.Join(dir, logFileName)
	keepLog := func() { _ = os.Rename(logFile.Name(), logPath) }
	cmd := exec.Command(exe, "env", "up", "--foreground")
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		_ = os.Remove(logFile.Name())
		return nil, fmt.Errorf("start the background control plane: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var exitErr error
	childDone := false
	for {
		st, err := ReadState()
		if err == nil {
			if st.PID == cmd.Process.Pid {
				keepLog()
			} else {
				_ = os.Remove(logFile.Name())
			}
			return st, nil
		}
		if !errors.Is(err, ErrNotRunning) {
			keepLog()
			return nil, err
		}
		// Once the child is gone and nothing holds the lock, nothing is
		// starting any more: the child failed, not lost the race.
		if childDone && !serveLockHeld(dir) {
			keepLog()
			log, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("the background control plane exited during start-up (%w); its log %s says:\n%s", exitErr, logPath, tail(string(log), 15))
		}
		select {
		case exitErr = <-exited:
			childDone = true
		case <-ctx.Done():
			if !childDone {
				_ = cmd.Process.Signal(syscall.SIGTERM)
			}
			keepLog()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Down stops the shared control plane, first warning on out about the lab
// sessions that use it. It signals only a process proven to serve it (see
// ReadState); a corrupt or stale state file is removed instead. It does not
// wait long: see stopServer.
func Down(ctx context.Context, out io.Writer) error {
	dir, err := privateStateDir(false)
	if err != nil {
		return err
	}
	st, err := ReadState()
	if errors.Is(err, ErrCorruptState) {
		path := filepath.Join(dir, stateFileName)
		_ = os.Remove(path)
		fmt.Fprintf(out, "removed a corrupt state file %s\n", path)
		return nil
	}
	if err != nil {
		return err
	}
	if w := attachedWarning(liveAttachments(st)); w != "" {
		fmt.Fprintln(out, w)
	}
	forced, err := stopServer(ctx, dir, st)
	if err != nil {
		return err
	}
	how := ""
	if forced {
		how = fmt.Sprintf("; it did not stop within %s and was ended", downGrace)
	}
	fmt.Fprintf(out, "stopped the control plane (pid %d, %s%s)\n", st.PID, st.Host, how)
	return nil
}

// stopServer asks the process serving st to stop and waits until it has
// released the serve lock: downGrace for a clean stop after SIGTERM, then a
// little longer after a second SIGTERM (lab ends at once on a second stop
// signal; its etcd and kube-apiserver die with it where setpriv gave them
// a parent-death signal), then after SIGKILL. A
// signal goes only to the process st names, while it still runs. Holding
// the lock at last, it removes what that process left behind and gives it
// a moment to exit. It reports whether the process had to be forced.
func stopServer(ctx context.Context, dir string, st *State) (forced bool, err error) {
	steps := []struct {
		sig  syscall.Signal
		wait time.Duration
	}{{syscall.SIGTERM, downGrace}, {syscall.SIGTERM, 2 * time.Second}, {syscall.SIGKILL, 5 * time.Second}}
	for i, step := range steps {
		if proc.Alive(st.PID, st.ProcessStart) {
			if err := syscall.Kill(st.PID, step.sig); err != nil && !errors.Is(err, syscall.ESRCH) {
				return false, fmt.Errorf("signal the control plane (pid %d): %w", st.PID, err)
			}
		}
		unlock, err := lockServe(ctx, dir, step.wait)
		if errors.Is(err, errLockHeld) {
			continue
		}
		if err != nil {
			return false, err
		}
		removeServeFiles(dir)
		unlock()
		// Past Serve, the process only removes its temporary files.
		waitExit(ctx, st, 2*time.Second)
		return i > 0, nil
	}
	return true, fmt.Errorf("the control plane (pid %d) did not stop: %s is still locked", st.PID, filepath.Join(dir, serveLockName))
}

// waitExit waits up to d for the process st names to end.
func waitExit(ctx context.Context, st *State, d time.Duration) {
	deadline := time.After(d)
	for proc.Alive(st.PID, st.ProcessStart) {
		select {
		case <-ctx.Done():
			return
		case <-deadline:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Ensure returns the running `lab env up` control plane (with opts.CRDs
// applied) when there is one, and otherwise starts a private one.
func Ensure(ctx context.Context, opts Options) (*ControlPlane, error) {
	st, err := ReadState()
	if err == nil {
		t := time.Now()
		cp, err := attach(st)
		if err != nil {
			return nil, fmt.Errorf("%w; stop it with `lab env down` or wait until it answers", err)
		}
		// `lab env down` warns the processes registered here.
		if cp.attachment, err = registerAttachment(st); err != nil {
			return nil, err
		}
		opts.progress(StepReuse, "", time.Since(t))
		if err := cp.installCRDs(opts); err != nil {
			_ = cp.Stop()
			return nil, err
		}
		return cp, nil
	}
	if !errors.Is(err, ErrNotRunning) {
		return nil, err
	}
	return Start(ctx, opts)
}

// attach connects to the shared control plane, checking that it answers.
func attach(st *State) (*ControlPlane, error) {
	cfg, err := configFromKubeconfig(st.Kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 1000, 2000
	probe := *cfg
	probe.Timeout = 10 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(&probe)
	if err != nil {
		return nil, err
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("the lab env control plane at %s does not answer: %w", st.Host, err)
	}
	return &ControlPlane{Config: cfg, KubeconfigPath: st.Kubeconfig, Host: strings.TrimSuffix(cfg.Host, "/"),
		KubernetesVersion: v.GitVersion, StartedAt: st.StartedAt, Shared: true}, nil
}
