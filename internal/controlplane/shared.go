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
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/discovery"
)

// stateVersion is bumped when State changes incompatibly.
const stateVersion = 1

// State describes the control plane that `lab env up` keeps running in the
// background. It lives in the user's cache directory.
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

// StateDir is where the shared control plane keeps its state, log and kubeconfig.
func StateDir() (string, error) {
	if dir := os.Getenv("LAB_STATE_DIR"); dir != "" {
		return dir, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("locate the cache directory: %w", err)
	}
	return filepath.Join(cache, "lab", "env"), nil
}

func statePath() (string, error) {
	dir, err := StateDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "state.json"), nil
}

// ReadState returns the running shared control plane. A state file whose
// process is gone is stale: it is removed and ErrNotRunning returned.
func ReadState() (*State, error) {
	path, err := statePath()
	if err != nil {
		return nil, err
	}
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
	if !processAlive(st.PID, st.ProcessStart) {
		_ = os.Remove(path)
		return nil, fmt.Errorf("%w (removed a stale state file: process %d is gone)", ErrNotRunning, st.PID)
	}
	return &st, nil
}

func writeState(st State) error {
	path, err := statePath()
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	return os.Rename(tmp, path)
}

// processAlive reports whether pid runs and, where the kernel tells
// (Linux /proc), is still the process that started at startTime.
func processAlive(pid int, startTime string) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	if startTime == "" {
		return true
	}
	now := processStartTime(pid)
	return now == "" || now == startTime
}

// processStartTime returns field 22 of /proc/PID/stat (start time in clock
// ticks since boot), or "" where there is no /proc.
func processStartTime(pid int) string {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return ""
	}
	s := string(data)
	// The command name may hold spaces; the fields after ")" are fixed.
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 20 {
		return ""
	}
	return fields[19]
}

// Serve runs the shared control plane in this process until ctx ends: it
// starts it, writes its kubeconfig and state where other lab commands find
// them, and on return stops it and removes the state.
func Serve(ctx context.Context, opts Options, ready func(*State)) error {
	dir, err := StateDir()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if st, err := ReadState(); err == nil {
		return fmt.Errorf("a lab env control plane is already running (pid %d, %s)", st.PID, st.Host)
	} else if errors.Is(err, ErrCorruptState) {
		return err
	}
	cp, err := Start(ctx, opts)
	if err != nil {
		return err
	}
	defer cp.Stop()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	data, err := os.ReadFile(cp.KubeconfigPath)
	if err != nil {
		return fmt.Errorf("read the kubeconfig: %w", err)
	}
	if err := os.WriteFile(kubeconfig, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", kubeconfig, err)
	}
	st := State{Version: stateVersion, PID: os.Getpid(), Host: cp.Host, Kubeconfig: kubeconfig,
		KubernetesVersion: cp.KubernetesVersion, StartedAt: cp.StartedAt, ProcessStart: processStartTime(os.Getpid())}
	if err := writeState(st); err != nil {
		return err
	}
	defer removeState(st.PID)
	if ready != nil {
		ready(&st)
	}
	<-ctx.Done()
	return nil
}

// removeState deletes the state file if it still belongs to pid.
func removeState(pid int) {
	path, err := statePath()
	if err != nil {
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	var st State
	if json.Unmarshal(data, &st) == nil && st.PID == pid {
		_ = os.Remove(path)
	}
}

// Up starts `exe env up --foreground` detached from this terminal, so the
// control plane outlives the command, and waits until it is ready.
func Up(ctx context.Context, exe string) (*State, error) {
	if st, err := ReadState(); err == nil {
		return st, nil
	} else if errors.Is(err, ErrCorruptState) {
		return nil, err
	}
	dir, err := StateDir()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	logPath := filepath.Join(dir, "env.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", logPath, err)
	}
	defer logFile.Close()
	cmd := exec.Command(exe, "env", "up", "--foreground")
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the background control plane: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for {
		if st, err := ReadState(); err == nil && st.PID == cmd.Process.Pid {
			return st, nil
		}
		select {
		case err := <-exited:
			log, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("the background control plane exited during start-up (%v); its log %s says:\n%s", err, logPath, tail(string(log), 15))
		case <-ctx.Done():
			_ = cmd.Process.Signal(syscall.SIGTERM)
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Down stops the shared control plane. A corrupt or stale state file is removed.
func Down(ctx context.Context, out io.Writer) error {
	st, err := ReadState()
	if errors.Is(err, ErrCorruptState) {
		path, _ := statePath()
		_ = os.Remove(path)
		fmt.Fprintf(out, "removed a corrupt state file %s\n", path)
		return nil
	}
	if err != nil {
		return err
	}
	if err := syscall.Kill(st.PID, syscall.SIGTERM); err != nil {
		return fmt.Errorf("signal the control plane (pid %d): %w", st.PID, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for processAlive(st.PID, st.ProcessStart) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(st.PID, syscall.SIGKILL)
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	removeState(st.PID)
	fmt.Fprintf(out, "stopped the control plane (pid %d, %s)\n", st.PID, st.Host)
	return nil
}

// Ensure returns the running `lab env up` control plane (with opts.CRDs
// applied) when there is one, and otherwise starts a private one.
func Ensure(ctx context.Context, opts Options) (*ControlPlane, error) {
	st, err := ReadState()
	if errors.Is(err, ErrCorruptState) {
		return nil, err
	}
	if err == nil {
		t := time.Now()
		cp, err := attach(st)
		if err != nil {
			return nil, fmt.Errorf("%w; stop it with `lab env down` or wait until it answers", err)
		}
		opts.progress(StepReuse, t)
		if err := cp.installCRDs(opts); err != nil {
			return nil, err
		}
		return cp, nil
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
