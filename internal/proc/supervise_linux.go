package proc

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const supervisionWorks = true

// stopGrace is how long the supervisor's child has, after a stop request,
// to exit by itself before everything is killed.
const stopGrace = 2 * time.Second

func itoa(n int) string { return strconv.Itoa(n) }

// directAttrs: own process group (a Ctrl-C meant for lab does not reach
// it; a cancel kills the group) and killed by the kernel when lab dies.
func directAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = DefaultWaitDelay
}

// killNow asks the supervisor to kill its tree at once (SIGTERM, SIGINT
// and SIGHUP ask it to stop with a grace period).
const killNow = syscall.SIGUSR1

// supervisedAttrs: the supervisor is told to kill its whole tree when lab
// dies and when the command is cancelled.
func supervisedAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: killNow}
	cmd.Cancel = func() error { return cmd.Process.Signal(killNow) }
	cmd.WaitDelay = DefaultWaitDelay
}

// supervise runs argv as a child and returns its exit code once it and
// every process it started are gone.
func supervise(parent string, argv []string) int {
	parentPID, err := strconv.Atoi(parent)
	if err != nil || os.Getppid() != parentPID {
		return 125 // lab is already gone (or this is not lab calling): start nothing
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "lab: supervise %s: %v\n", argv[0], err)
	}
	stop := make(chan os.Signal, 4)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, killNow)

	child := exec.Command(argv[0], argv[1:]...)
	child.Stdin, child.Stdout, child.Stderr = os.Stdin, os.Stdout, os.Stderr
	child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := child.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "lab: start %s: %v\n", argv[0], err)
		return 127
	}
	exited := make(chan struct{})
	go func() {
		_ = child.Wait()
		close(exited)
	}()
	code := -1
	parentGone := time.NewTicker(200 * time.Millisecond)
	defer parentGone.Stop()
	for code < 0 {
		select {
		case <-exited:
			code = exitCode(child.ProcessState)
		case sig := <-stop:
			code = 128 + int(syscall.SIGKILL)
			if sig != killNow {
				// Asked to stop: the child's group first gets the same
				// signal, then, if it lingers, everything is killed.
				_ = syscall.Kill(-child.Process.Pid, sig.(syscall.Signal))
				select {
				case <-exited:
				case <-time.After(stopGrace):
				}
				code = 128 + int(sig.(syscall.Signal))
			}
		case <-parentGone.C:
			if os.Getppid() != parentPID {
				code = 128 + int(syscall.SIGKILL)
			}
		}
	}
	killTree(child.Process.Pid)
	return code
}

// killTree kills the child's process group and then every process left
// below the supervisor (orphans are re-parented to it, as it is a
// subreaper) until none is left.
func killTree(childPID int) {
	_ = syscall.Kill(-childPID, syscall.SIGKILL)
	self := os.Getpid()
	for range 100000 {
		kids := children(self)
		for _, c := range kids {
			_ = syscall.Kill(c, syscall.SIGKILL)
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if err == syscall.ECHILD {
				return
			}
			if pid <= 0 {
				break // children left, none exited yet
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}
