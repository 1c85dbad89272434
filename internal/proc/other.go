//go:build !linux

package proc

import (
	"os/exec"
	"syscall"
)

// Elsewhere there is no subreaper or parent-death signal: children get
// their own process group, and a cancel kills it.
const supervisionWorks = false

func directAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = DefaultWaitDelay
}

func supervisedAttrs(cmd *exec.Cmd) { directAttrs(cmd) }

func supervise(string, []string) int { return 125 }

// StartTime is unknown without /proc.
func StartTime(int) string { return "" }

// Alive, without /proc to read start times from, can only tell that the
// PID exists (start times are always "" here); callers add their own proof
// (lab env's lock).
func Alive(pid int, startTime string) bool {
	return pid > 0 && startTime == "" && syscall.Kill(pid, 0) == nil
}

// CommandLine is unknown without /proc.
func CommandLine(int) []string { return nil }

// ParentPID is unknown without /proc.
func ParentPID(int) int { return 0 }

// KillChildrenMentioning cannot find children without /proc.
func KillChildrenMentioning(string) int { return 0 }

// Running cannot be told without /proc.
func Running(int) bool { return false }
