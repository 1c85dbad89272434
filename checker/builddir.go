package checker

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockBuildDir returns the private build folder of a workspace, emptied and
// locked against a concurrent check of the same workspace (say, --watch and
// a check by hand). The folder is stable per workspace on purpose: the go
// build cache keys compiled packages by their folder, so the same folder
// check after check lets unchanged packages come from the cache.
func lockBuildDir(workspaceDir string) (string, func(), error) {
	abs, err := filepath.Abs(workspaceDir)
	if err != nil {
		return "", nil, fmt.Errorf("workspace %s: %w", workspaceDir, err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256([]byte(abs))
	dir := filepath.Join(cache, "lab", "check", filepath.Base(abs)+"-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return "", nil, fmt.Errorf("create build folder: %w", err)
	}
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", nil, fmt.Errorf("lock build folder: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		lock.Close()
		return "", nil, fmt.Errorf("lock build folder: %w", err)
	}
	unlock := func() {
		_ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		_ = lock.Close()
	}
	if err := os.RemoveAll(dir); err != nil {
		unlock()
		return "", nil, fmt.Errorf("clear build folder: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		unlock()
		return "", nil, fmt.Errorf("create build folder: %w", err)
	}
	return dir, unlock, nil
}
