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

// CacheRoot is the folder every workspace's private build lives under:
// <user cache>/lab/check.
func CacheRoot() string {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	return filepath.Join(cache, "lab", "check")
}

// buildDirOf returns the private build folder of a workspace:
// <CacheRoot>/<folder name>-<hash of its path>.
func buildDirOf(workspaceDir string) (string, error) {
	abs, err := filepath.Abs(workspaceDir)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", workspaceDir, err)
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(CacheRoot(), filepath.Base(abs)+"-"+hex.EncodeToString(sum[:6])), nil
}

// lockBuildDir returns the private build folder of a workspace, emptied,
// and the folder its test binaries are kept in between checks, both locked
// against a concurrent check of the same workspace (say, --watch and a check
// by hand). The folders are stable per workspace on purpose: the go build
// cache keys compiled packages by their folder, and `go test -c` relinks
// only binaries that are out of date.
//
// purpose tells apart the builds of one workspace that may run at once: ""
// for checks, "runner" for `lab start --mine`.
func lockBuildDir(workspaceDir, purpose string) (dir, binDir string, unlock func(), err error) {
	dir, err = buildDirOf(workspaceDir)
	if err != nil {
		return "", "", nil, err
	}
	if purpose != "" {
		dir += "-" + purpose
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

// BuildFiles lists what checks and `lab start --mine` keep of a workspace
// between runs: the build folders, the binaries (a few hundred MB) and
// their locks. Some may not exist.
func BuildFiles(workspaceDir string) ([]string, error) {
	dir, err := buildDirOf(workspaceDir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range []string{dir, dir + "-" + runnerPurpose} {
		out = append(out, d, d+".bin", d+".lock")
	}
	return out, nil
}

// RemoveBuildFiles deletes the workspace's BuildFiles. The next check
// rebuilds them.
func RemoveBuildFiles(workspaceDir string) error {
	paths, err := BuildFiles(workspaceDir)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range paths {
		errs = append(errs, ignoreMissing(os.RemoveAll(p)))
	}
	return errors.Join(errs...)
}

func ignoreMissing(err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
