package proc

import (
	"fmt"
	"os"
	"syscall"
)

// NotPrivateError says a folder lab keeps secrets in is not a folder of
// this user's own: on a shared machine it could be a trap set by someone else.
type NotPrivateError struct {
	Dir string
	Why string // "is a symlink", "belongs to another user (uid 1001)", …
}

func (e *NotPrivateError) Error() string { return e.Dir + " " + e.Why }

// MakePrivate checks that dir (which must exist) is a real folder owned by
// this user, not a symlink, and makes it 0700.
func MakePrivate(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("inspect %s: %w", dir, err)
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return &NotPrivateError{dir, "is a symlink"}
	case !fi.IsDir():
		return &NotPrivateError{dir, "is not a directory"}
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return &NotPrivateError{dir, fmt.Sprintf("belongs to another user (uid %d)", st.Uid)}
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("make %s private: %w", dir, err)
		}
	}
	return nil
}
