package checker

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// immutableCopy copies a binary into a sealed memfd: a file with no name
// whose contents no one, its owner included, can change once sealed. The
// binary runs from /proc/<lab>/fd/<n> while lab holds it open.
func immutableCopy(src *os.File, name string, want [sha256.Size]byte) (string, func(), error) {
	fd, err := unix.MemfdCreate("lab-check-"+name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_EXEC)
	if errors.Is(err, unix.EINVAL) { // kernels before 6.3 know no MFD_EXEC: executable is their default
		fd, err = unix.MemfdCreate("lab-check-"+name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if err != nil {
		return "", nil, fmt.Errorf("copy check binary %s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	release := func() { _ = f.Close() }
	if err := copyVerified(f, src, want); err != nil {
		release()
		if errors.Is(err, errTampered) {
			return "", nil, err
		}
		return "", nil, fmt.Errorf("copy check binary %s: %w", name, err)
	}
	seals := unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE | unix.F_SEAL_SEAL
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
		release()
		return "", nil, fmt.Errorf("seal check binary %s: %w", name, err)
	}
	return fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), fd), release, nil
}
