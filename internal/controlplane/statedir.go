package controlplane

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/operator-lab/lab/internal/proc"
)

// StateDir is where the shared control plane keeps its state, log and kubeconfig.
func StateDir() (string, error) {
	if dir := os.Getenv("LAB_STATE_DIR"); dir != "" {
		return dir, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("locate the cache directory: %w", err)
	}
	return filepath.Join(cache, "lab", "env"), nil
}

// privateStateDir returns StateDir made private: created 0700 if it is
// missing and create is set, and otherwise required to be a real directory
// (not a symlink) of the current user, which is chmod-ed to 0700 if it is
// more open. The directory holds an admin kubeconfig, so a directory someone
// else owns or can write to is never used as it is. A missing directory is
// not an error when create is false: reading from it finds nothing.
func privateStateDir(create bool) (string, error) {
	dir, err := StateDir()
	if err != nil {
		return "", err
	}
	if create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", fmt.Errorf("create %s: %w", dir, err)
		}
	}
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) && !create {
		return dir, nil
	}
	var notPrivate *proc.NotPrivateError
	if err := proc.MakePrivate(dir); errors.As(err, &notPrivate) {
		return "", fmt.Errorf("the state directory %s %s; lab keeps an admin kubeconfig there and will not use it: remove it, or set LAB_STATE_DIR to a directory of your own", dir, notPrivate.Why)
	} else if err != nil {
		return "", fmt.Errorf("the state directory: %w", err)
	}
	return dir, nil
}

// writePrivateFile replaces path with data, mode 0600, through a fresh
// temporary file in the same directory (created exclusively, so a planted
// file or symlink is never written through) renamed over path. An existing
// file at path, whatever its mode, is replaced, not rewritten in place.
func writePrivateFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
