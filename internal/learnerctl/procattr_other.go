//go:build !linux

package learnerctl

import "syscall"

// procAttr puts the program in its own process group; without a
// parent-death signal, the closed stdin is what stops it if lab dies.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
