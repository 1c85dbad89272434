package proc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// TempRootEnv names the folder that holds every lab process's private temp
// folder. lab sets it for its children, so a lab started by lab (the
// background `lab env up`) uses the same root, not its parent's folder.
const TempRootEnv = "LAB_TEMP_ROOT"

// UsePrivateTempDir creates this process's private temp folder, points
// TMPDIR at it, and removes the folders of lab processes that are gone.
// cleanup removes the folder; call it when lab ends.
func UsePrivateTempDir() (dir string, cleanup func(), err error) {
	root, err := tempRoot()
	if err != nil {
		return "", func() {}, err
	}
	reapTempDirs(root)
	pid := os.Getpid()
	dir, err = os.MkdirTemp(root, fmt.Sprintf("%d-%s-", pid, StartTime(pid)))
	if err != nil {
		return "", func() {}, fmt.Errorf("create a private temp folder in %s: %w", root, err)
	}
	if err := os.Setenv("TMPDIR", dir); err != nil {
		_ = os.RemoveAll(dir)
		return "", func() {}, fmt.Errorf("set TMPDIR: %w", err)
	}
	_ = os.Setenv(TempRootEnv, root)
	return dir, func() { removeAllSettled(dir) }, nil
}

// removeAllSettled removes dir, trying again for a short while: a child
// that has not yet died (it dies with lab) may still create files in it,
// and then one RemoveAll fails with "directory not empty".
func removeAllSettled(dir string) {
	for range 50 {
		if err := os.RemoveAll(dir); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tempRoot is $LAB_TEMP_ROOT, or lab-<uid> in the system temp folder,
// created 0700. A root that is a symlink or belongs to another user is
// refused: it could be a trap set by someone else on a shared /tmp.
func tempRoot() (string, error) {
	root := os.Getenv(TempRootEnv)
	if root == "" {
		root = filepath.Join(os.TempDir(), "lab-"+strconv.Itoa(os.Getuid()))
	}
	if err := os.Mkdir(root, 0o700); err != nil && !os.IsExist(err) {
		return "", fmt.Errorf("create %s: %w", root, err)
	}
	if err := MakePrivate(root); err != nil {
		return "", fmt.Errorf("%w: not a folder of your own; remove it (or set %s)", err, TempRootEnv)
	}
	return root, nil
}

// reapTempDirs removes the folders whose owner ("<pid>-<start time>-…")
// no longer runs.
func reapTempDirs(root string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		parts := strings.SplitN(e.Name(), "-", 3)
		if len(parts) != 3 {
			continue
		}
		pid, err := strconv.Atoi(parts[0])
		if err != nil || Alive(pid, parts[1]) {
			continue
		}
		if parts[1] == "" && !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			continue // no start time to prove the owner gone (no /proc): only a missing PID does
		}
		_ = os.RemoveAll(filepath.Join(root, e.Name()))
	}
}
