package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// execWrapFlag makes suitereport the -exec program of its lanes' go test:
// it runs one test binary and notes the CPU time the binary and everything
// it waited for (control planes, lab's builds, check binaries) used. On a
// 2-core machine the suite's CPU time, not its wall time, is what another
// change can make longer: the wall time of one package says little when
// the packages beside it took the cores.
const execWrapFlag = "-exec-wrap"

// execWrapArg is the -exec value for go test: this program, wrapping.
func execWrapArg(cpuPath string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find suitereport itself: %w", err)
	}
	return quote(self) + " " + execWrapFlag + " " + quote(cpuPath), nil
}

// quote quotes a path for go's -exec flag (split like a shell's words).
func quote(s string) string {
	if !strings.ContainsAny(s, " '\"\\\t") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// execWrap runs argv (a test binary and its flags), passing on the
// signals go test sends it (QUIT for a goroutine dump on a timeout), and
// appends "DIR CPU-SECONDS" to cpuPath, DIR being the package's folder
// the binary runs in. It returns the binary's exit code.
func execWrap(cpuPath string, argv []string) int {
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "suitereport -exec-wrap: no program to run")
		return 2
	}
	// The child's death signal belongs to the thread that started it:
	// keep that thread for the child's whole life.
	runtime.LockOSThread()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// If go test kills this wrapper outright, the test binary goes too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGHUP)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "suitereport -exec-wrap:", err)
		return 2
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-signals:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	if cmd.ProcessState != nil {
		noteCPU(cpuPath, cmd.ProcessState)
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		if status, ok := exit.Sys().(syscall.WaitStatus); ok && status.Signaled() {
			return 128 + int(status.Signal())
		}
		return exit.ExitCode()
	case err != nil:
		fmt.Fprintln(os.Stderr, "suitereport -exec-wrap:", err)
		return 2
	}
	return 0
}

// noteCPU appends the package folder and the CPU seconds of a finished
// test binary (wait4's usage: the binary and its waited-for descendants).
func noteCPU(cpuPath string, st *os.ProcessState) {
	cpu := st.UserTime() + st.SystemTime()
	dir, err := os.Getwd()
	if err != nil {
		return
	}
	f, err := os.OpenFile(cpuPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	// One short write per line: O_APPEND keeps concurrent lines whole.
	_, _ = fmt.Fprintf(f, "%s %.3f\n", dir, cpu.Seconds())
}

// readCPU sums the CPU seconds noted per package folder, keyed by the
// folder relative to root ("." for root itself).
func readCPU(path, root string) map[string]time.Duration {
	out := map[string]time.Duration{}
	b, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		secs, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(root, line[:i])
		if err != nil {
			continue
		}
		out[filepath.ToSlash(rel)] += time.Duration(secs * float64(time.Second))
	}
	return out
}
