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

// Alive cannot prove a process's identity without /proc.
func Alive(int, string) bool { return false }

// CommandLine is unknown without /proc.
func CommandLine(int) []string { return nil }

// ParentPID is unknown without /proc.
func ParentPID(int) int { return 0 }

// Running cannot be told without /proc.
func Running(int) bool { return false }
