package proc

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// supervisorArg, as a binary's first argument, asks for supervisor mode:
// `lab __lab-supervise <parent pid> -- program args…`.
const supervisorArg = "__lab-supervise"

// DefaultWaitDelay bounds how long Wait waits, once a command is stopped,
// for its output pipes to close.
const DefaultWaitDelay = 5 * time.Second

var (
	selfMu sync.Mutex
	// self is the executable that can act as supervisor ("" = none).
	self string
)

// RunIfSupervisor must be called first thing by a binary that starts
// children through Command (lab's main, and the TestMain of packages whose
// tests do): in supervisor mode it supervises and returns the exit code
// with ok set; otherwise it enables supervision for this process's
// commands and returns ok false.
func RunIfSupervisor() (code int, ok bool) {
	if len(os.Args) >= 5 && os.Args[1] == supervisorArg && os.Args[3] == "--" {
		return supervise(os.Args[2], os.Args[4:]), true
	}
	if supervisionWorks {
		selfMu.Lock()
		// Not os.Executable's path: this keeps working if lab's binary is
		// replaced or deleted while it runs.
		self = "/proc/self/exe"
		selfMu.Unlock()
	}
	return 0, false
}

func supervisor() string {
	selfMu.Lock()
	defer selfMu.Unlock()
	return self
}

// Command is exec.CommandContext for the processes lab starts: when ctx
// ends the command and everything it started are killed, and they die with
// lab however lab ends. Callers set Dir, Env and the streams as usual, but
// not SysProcAttr, Cancel or WaitDelay. cmd.Process is the supervisor when
// there is one, so its PID is not the program's.
func Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	path, err := exec.LookPath(name)
	sup := supervisor()
	if err != nil || sup == "" {
		// Unsupervised (or not found: Start reports it as exec does).
		cmd := exec.CommandContext(ctx, name, args...)
		directAttrs(cmd)
		return cmd
	}
	cmd := exec.CommandContext(ctx, sup, append([]string{supervisorArg, strconv.Itoa(os.Getpid()), "--", path}, args...)...)
	supervisedAttrs(cmd)
	return cmd
}

// Kill kills a command started by Command, and everything it started, now.
func Kill(cmd *exec.Cmd) error {
	if cmd.Process == nil || cmd.Cancel == nil {
		return nil
	}
	return cmd.Cancel()
}

// IsSupervisor reports whether a process's arguments are a supervisor's.
func IsSupervisor(args []string) bool { return len(args) > 1 && args[1] == supervisorArg }

// SignalExitCode is the exit status a shell shows for a process ended by
// sig: 128 + its number (130 for Ctrl-C, 143 for SIGTERM).
func SignalExitCode(sig syscall.Signal) int { return 128 + int(sig) }
