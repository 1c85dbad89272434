package checker

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// immutableCopy copies a binary into a sealed memfd: a file with no name
// whose contents no one, its owner included, can change once sealed. It
// runs from /proc/<lab>/fd/<n> while lab holds it open.
func immutableCopy(src io.Reader, name string) (*os.File, error) {
	fd, err := unix.MemfdCreate("lab-check-"+name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_EXEC)
	if errors.Is(err, unix.EINVAL) { // kernels before 6.3 know no MFD_EXEC: executable is their default
		fd, err = unix.MemfdCreate("lab-check-"+name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if err != nil {
		return nil, fmt.Errorf("create a memfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), name)
	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		return nil, err
	}
	seals := unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE | unix.F_SEAL_SEAL
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
		f.Close()
		return nil, fmt.Errorf("seal: %w", err)
	}
	return f, nil
}

func execPath(f *os.File) string { return fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), f.Fd()) }

func releaseCopy(f *os.File) { _ = f.Close() }

// untouched says a file is the one it was, unchanged: the same inode, size
// and modification time, and the same change time, which every write,
// rename or chmod moves and no program can set back.
func untouched(before, now os.FileInfo) bool {
	b, ok1 := before.Sys().(*syscall.Stat_t)
	n, ok2 := now.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && b.Ino == n.Ino && b.Dev == n.Dev && b.Size == n.Size && b.Mtim == n.Mtim && b.Ctim == n.Ctim
}
