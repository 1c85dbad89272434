//go:build !linux

package checker

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
)

// immutableCopy copies a binary into a read-only private file: without
// Linux's sealed memfds, code running as the same user could still change
// it between this copy and its start, a window of milliseconds.
func immutableCopy(src *os.File, name string, want [sha256.Size]byte) (string, func(), error) {
	f, err := os.CreateTemp("", "lab-check-*-"+name)
	if err != nil {
		return "", nil, fmt.Errorf("copy check binary %s: %w", name, err)
	}
	release := func() { _ = os.Remove(f.Name()) }
	err = copyVerified(f, src, want)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o500)
	}
	if err != nil {
		release()
		if errors.Is(err, errTampered) {
			return "", nil, err
		}
		return "", nil, fmt.Errorf("copy check binary %s: %w", name, err)
	}
	return f.Name(), release, nil
}
