package learnerctl

import "syscall"

// procAttr puts the program in its own process group (a Ctrl-C meant for
// lab does not reach it) and has the kernel kill it if lab dies, however
// lab dies.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
