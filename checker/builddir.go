package checker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/operator-lab/lab/internal/filelock"
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

// Purpose tells apart the private builds of one workspace that may run at
// the same time (a check while `lab start --mine` runs): each has its own
// folder and lock.
type Purpose string

const (
	// ForChecks is the build `lab check` grades in.
	ForChecks Purpose = ""
	// ForRunner is the build `lab start --mine` compiles the learner's
	// controller in (internal/mine).
	ForRunner Purpose = "runner"
)

// buildPurposes are all of them, for removing a workspace's build files.
var buildPurposes = []Purpose{ForChecks, ForRunner}

// buildDirOf returns the private build folder of a workspace for one
// purpose: <CacheRoot>/<folder name>-<hash of its path>[-<purpose>].
func buildDirOf(workspaceDir string, purpose Purpose) (string, error) {
	abs, err := filepath.Abs(workspaceDir)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", workspaceDir, err)
	}
	sum := sha256.Sum256([]byte(abs))
	dir := filepath.Join(CacheRoot(), filepath.Base(abs)+"-"+hex.EncodeToString(sum[:6]))
	if purpose != "" {
		dir += "-" + string(purpose)
	}
	return dir, nil
}

// lockBuildDir returns the private build folder of a workspace, emptied,
// and the folder its test binaries are kept in between checks, both locked
// against a concurrent check of the same workspace (say, --watch and a check
// by hand). The folders are stable per workspace on purpose: the go build
// cache keys compiled packages by their folder, and `go test -c` relinks
// only binaries that are out of date.
func lockBuildDir(workspaceDir string, purpose Purpose) (dir, binDir string, unlock func(), err error) {
	return lockBuildDirWaiting(context.Background(), workspaceDir, purpose, nil)
}

// lockPoll is how often a busy build lock is tried again.
const lockPoll = 100 * time.Millisecond

// lockBuildDirWaiting is lockBuildDir that, when another build holds the
// lock, first calls waiting (if set), once, then waits until the lock is
// free or ctx ends.
func lockBuildDirWaiting(ctx context.Context, workspaceDir string, purpose Purpose, waiting func()) (dir, binDir string, unlock func(), err error) {
	dir, err = buildDirOf(workspaceDir, purpose)
	if err != nil {
		return "", "", nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return "", "", nil, fmt.Errorf("create build folder: %w", err)
	}
	unlock, err = filelock.Lock(ctx, dir+".lock", filelock.Options{Wait: -1, Poll: lockPoll, Busy: waiting})
	if err != nil {
		return "", "", nil, fmt.Errorf("lock the build folder: %w", err)
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

// tryLock takes the lock of existing build files without waiting:
// ErrBuildFilesInUse if a build holds it.
func tryLock(path string) (unlock func(), err error) {
	unlock, err = filelock.Lock(context.Background(), path, filelock.Options{MustExist: true})
	if errors.Is(err, filelock.ErrHeld) {
		return nil, ErrBuildFilesInUse
	}
	return unlock, err
}

// ErrBuildFilesInUse says a check or `lab start --mine` holds the build
// files being removed.
var ErrBuildFilesInUse = errors.New("a check, `lab start --mine` or lab's background build of the checks is using the build files right now; try again when it ends")

// BuildFiles lists the folders checks and `lab start --mine` keep of a
// workspace between runs: the private copies and the binaries (a few
// hundred MB). Some may not exist.
func BuildFiles(workspaceDir string) ([]string, error) {
	var out []string
	for _, purpose := range buildPurposes {
		dir, err := buildDirOf(workspaceDir, purpose)
		if err != nil {
			return nil, err
		}
		out = append(out, dir, dir+".bin")
	}
	return out, nil
}

// RemoveBuildFiles deletes the workspace's BuildFiles, each under its
// build's lock, so a build in progress is never pulled from under it
// (ErrBuildFilesInUse). The next check rebuilds them.
func RemoveBuildFiles(workspaceDir string) error {
	for _, purpose := range buildPurposes {
		dir, err := buildDirOf(workspaceDir, purpose)
		if err != nil {
			return err
		}
		unlock, err := tryLock(dir + ".lock")
		switch {
		case errors.Is(err, os.ErrNotExist):
			unlock = func() {} // never built: nobody to wait for
		case err != nil:
			return err
		}
		err = errors.Join(os.RemoveAll(dir), os.RemoveAll(dir+".bin"))
		unlock()
		if err != nil {
			return fmt.Errorf("remove build files: %w", err)
		}
	}
	return nil
}

// RemoveAllBuildFiles deletes CacheRoot: every workspace's build files,
// unless some build is in progress (ErrBuildFilesInUse).
func RemoveAllBuildFiles() error {
	locks, err := filepath.Glob(filepath.Join(CacheRoot(), "*.lock"))
	if err != nil {
		return fmt.Errorf("list build locks: %w", err)
	}
	for _, l := range locks {
		unlock, err := tryLock(l)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		defer unlock()
	}
	if err := os.RemoveAll(CacheRoot()); err != nil {
		return fmt.Errorf("remove build files: %w", err)
	}
	return nil
}
