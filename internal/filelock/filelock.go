// Package filelock takes exclusive locks on files (flock). The kernel drops
// a lock when its holder dies, however it dies, so a lab that was killed
// never blocks the next one, and a lock that can be taken proves that
// nobody holds it.
package filelock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// ErrHeld means another process holds the lock.
var ErrHeld = errors.New("locked by another process")

// Options say how to take a lock.
type Options struct {
	// Wait is how long to keep trying while another process holds the
	// lock: 0 tries once, a negative Wait tries until ctx ends.
	Wait time.Duration
	// Poll is how often to try again (default 100ms).
	Poll time.Duration
	// Busy, if set, is called once, the first time the lock is found held
	// (to tell the user what lab waits for).
	Busy func()
	// MustExist fails with an error satisfying errors.Is(err,
	// os.ErrNotExist) instead of creating a missing lock file.
	MustExist bool
}

// Lock takes an exclusive lock on the file at path (created 0600 unless
// MustExist; never through a symlink) and returns what releases it. It
// fails with ErrHeld when the lock is still held once Wait is over, and
// with ctx's cause when ctx ends first.
func Lock(ctx context.Context, path string, o Options) (unlock func(), err error) {
	flags := os.O_RDWR | syscall.O_NOFOLLOW
	if !o.MustExist {
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the lock %s: %w", path, err)
	}
	poll := o.Poll
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	deadline := time.Now().Add(o.Wait)
	for told := false; ; told = true {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			// Closing the file releases the lock.
			return func() { _ = f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if o.Wait >= 0 && !time.Now().Before(deadline) {
			f.Close()
			return nil, fmt.Errorf("%w (%s)", ErrHeld, path)
		}
		if !told && o.Busy != nil {
			o.Busy()
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("wait for the lock %s: %w", path, context.Cause(ctx))
		case <-time.After(poll):
		}
	}
}
