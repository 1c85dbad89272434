package checker

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// buildDirOf returns the private build folder of a workspace:
// <user cache>/lab/check/<folder name>-<hash of its path>.
func buildDirOf(workspaceDir string) (string, error) {
	abs, err := filepath.Abs(workspaceDir)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", workspaceDir, err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(cache, "lab", "check", filepath.Base(abs)+"-"+hex.EncodeToString(sum[:6])), nil
}

// lockBuildDir returns the private build folder of a workspace, emptied,
// and the folder its test binaries are kept in between checks, both locked
// against a concurrent check of the same workspace (say, --watch and a check
// by hand). The folders are stable per workspace on purpose: the go build
// cache keys compiled packages by their folder, and `go test -c` relinks
// only binaries that are out of date.
func lockBuildDir(workspaceDir string) (dir, binDir string, unlock func(), err error) {
	dir, err = buildDirOf(workspaceDir)
	if err != nil {
		return "", "", nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return "", "", nil, fmt.Errorf("create build folder: %w", err)
	}
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", "", nil, fmt.Errorf("lock build folder: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		lock.Close()
		return "", "", nil, fmt.Errorf("lock build folder: %w", err)
	}
	unlock = func() {
		_ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		_ = lock.Close()
	}
	fail := func(what string, err error) (string, string, func(), error) {
		unlock()
		return "", "", nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fail("clear build folder", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail("create build folder", err)
	}
	binDir = dir + ".bin"
	if err := os.MkdirAll(binDir, 0o700); err != nil {
		return fail("create test binary folder", err)
	}
	return dir, binDir, unlock, nil
}

// RemoveBuildFiles deletes what checks of a workspace keep between runs:
// the build folder and the test binaries (a few hundred MB). The next check
// rebuilds them.
func RemoveBuildFiles(workspaceDir string) error {
	dir, err := buildDirOf(workspaceDir)
	if err != nil {
		return err
	}
	lockErr := os.Remove(dir + ".lock")
	if errors.Is(lockErr, os.ErrNotExist) {
		lockErr = nil
	}
	return errors.Join(os.RemoveAll(dir), os.RemoveAll(dir+".bin"), lockErr)
}
