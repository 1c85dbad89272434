//go:build !linux

package checker

import (
	"io"
	"os"
)

// immutableCopy copies a binary into a read-only private file. Without
// Linux's sealed memfds, code running as the same user could still change
// that copy while the checks run: the README says so.
func immutableCopy(src io.Reader, name string) (*os.File, error) {
	f, err := os.CreateTemp("", "lab-check-*-"+name)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(f, src); err != nil {
		releaseCopy(f)
		return nil, err
	}
	if err := os.Chmod(f.Name(), 0o500); err != nil {
		releaseCopy(f)
		return nil, err
	}
	return f, nil
}

func execPath(f *os.File) string { return f.Name() }

func releaseCopy(f *os.File) {
	_ = f.Close()
	_ = os.Remove(f.Name())
}

// untouched cannot tell without Linux's change time: the content decides.
func untouched(before, now os.FileInfo) bool { return false }
