package proc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// StartTime returns the kernel's start time of pid (field 22 of
// /proc/PID/stat, clock ticks since boot), or "" if pid is gone. With the
// PID it identifies a process for good: PIDs are reused, start times of a
// PID are not.
func StartTime(pid int) string {
	fields := statFields(pid)
	if len(fields) < 20 {
		return ""
	}
	return fields[19]
}

// Alive reports whether pid runs, is not a zombie, and started at
// startTime. An empty startTime proves nothing, so it never matches.
func Alive(pid int, startTime string) bool {
	if pid <= 0 || startTime == "" {
		return false
	}
	fields := statFields(pid)
	return len(fields) >= 20 && fields[0] != "Z" && fields[19] == startTime
}

// CommandLine returns the arguments pid was started with (nil if gone).
func CommandLine(pid int) []string {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || len(data) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
}

// statFields are the fields of /proc/PID/stat after the command name (which
// may hold spaces and parentheses): state, ppid, ….
func statFields(pid int) []string {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil
	}
	s := string(data)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}

// children returns the PIDs whose parent is pid.
func children(pid int) []int {
	var out []int
	// The kernel lists each thread's children; a Go process has several threads.
	tasks, err := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "children"))
	if err == nil && len(tasks) > 0 {
		for _, t := range tasks {
			data, err := os.ReadFile(t)
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(data)) {
				if c, err := strconv.Atoi(f); err == nil {
					out = append(out, c)
				}
			}
		}
		return out
	}
	// Kernels without CONFIG_PROC_CHILDREN: scan every process.
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		c, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := statFields(c); len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, c)
		}
	}
	return out
}

// ParentPID returns the parent of pid (0 if gone).
func ParentPID(pid int) int {
	fields := statFields(pid)
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

// Running reports whether pid exists and is not a zombie.
func Running(pid int) bool {
	fields := statFields(pid)
	return len(fields) > 0 && fields[0] != "Z"
}

// KillChildrenMentioning kills (SIGKILL) this process's children with an
// argument that contains s, and says how many it found. Only children: a
// PID whose parent is this process cannot be anyone else's.
func KillChildrenMentioning(s string) int {
	n := 0
	for _, c := range children(os.Getpid()) {
		for _, arg := range CommandLine(c) {
			if strings.Contains(arg, s) {
				_ = syscall.Kill(c, syscall.SIGKILL)
				n++
				break
			}
		}
	}
	return n
}
