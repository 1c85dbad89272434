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

// directAttrs: own process group (a Ctrl-C meant for lab does not reach
// it; a cancel kills the group) and killed by the kernel when lab dies —
// the child itself, not what it started: that needs the supervisor.
func directAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = DefaultWaitDelay
}

// Signals to the supervisor: killNow asks it to kill its tree at once
// (SIGTERM, SIGINT and SIGHUP ask it to stop with a grace period);
// parentDied is its parent-death signal. The kernel sends that one when
// the thread that started the supervisor exits, which is not always lab
// exiting, so it counts only once the parent PID has changed.
const (
	killNow    = syscall.SIGUSR1
	parentDied = syscall.SIGUSR2
)

// supervisedAttrs: the supervisor is told to kill its whole tree when lab
// dies and when the command is cancelled.
func supervisedAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: parentDied}
	cmd.Cancel = func() error {
		if err := cmd.Process.Signal(killNow); err != nil {
			return err
		}
		go insist(cmd.Process)
		return nil
	}
	cmd.WaitDelay = DefaultWaitDelay
}

// insist repeats a kill request until the supervisor is gone. A supervisor
// still starting up has not subscribed to killNow yet, and the Go runtime
// drops a signal nobody subscribed to, so one request can be lost; one
// that is still not obeyed after a while becomes SIGKILL (its child then
// dies of its own parent-death signal).
func insist(p *os.Process) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(stopGrace)
	for {
		select {
		case <-tick.C:
			if err := p.Signal(killNow); err != nil {
				return // gone (os.ErrProcessDone)
			}
		case <-deadline:
			_ = p.Signal(syscall.SIGKILL)
			return
		}
	}
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
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, killNow, parentDied)

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
	// The child's own end, or the signal that ends it here.
	var killedBy syscall.Signal
	ended := false
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for !ended && killedBy == 0 {
		select {
		case <-exited:
			ended = true
		case sig := <-stop:
			if sig == parentDied && os.Getppid() == parentPID {
				continue // only a thread of lab ended
			}
			killedBy = syscall.SIGKILL
			if sig != killNow && sig != parentDied {
				// Asked to stop: the child's group first gets the same
				// signal, then, if it lingers, everything is killed.
				_ = syscall.Kill(-child.Process.Pid, sig.(syscall.Signal))
				select {
				case <-exited:
					ended, killedBy = true, 0 // it stopped by itself: its own status
				case <-time.After(stopGrace):
					killedBy = sig.(syscall.Signal)
				}
			}
		case <-tick.C:
			if os.Getppid() != parentPID {
				killedBy = syscall.SIGKILL
			}
			reapZombies(child.Process.Pid)
		}
	}
	killTree(child.Process.Pid)
	if ended {
		if ws, ok := child.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			killedBy = ws.Signal()
		} else {
			return child.ProcessState.ExitCode()
		}
	}
	return endLike(killedBy)
}

// endLike ends the supervisor by sig where that is what lab should see
// ("signal: killed"), and otherwise returns the shell's 128+sig. Signals
// the Go runtime itself handles (SIGSEGV, SIGQUIT, …) are not re-raised:
// it would print a goroutine dump.
func endLike(sig syscall.Signal) int {
	switch sig {
	case syscall.SIGKILL, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP:
		signal.Reset(sig)
		_ = syscall.Kill(os.Getpid(), sig)
		time.Sleep(time.Second) // delivery is asynchronous
	}
	return SignalExitCode(sig)
}

// reapZombies collects the supervisor's re-parented orphans that have
// ended, so they do not pile up as zombies while its child runs. The child
// itself is left to os/exec.
func reapZombies(childPID int) {
	for _, c := range children(os.Getpid()) {
		if c != childPID {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(c, &ws, syscall.WNOHANG, nil)
		}
	}
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
