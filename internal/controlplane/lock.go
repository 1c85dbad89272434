package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// serveLockName is the file in the state directory on which the process
// serving the shared control plane holds an exclusive flock for its whole
// life, from before it looks for a running one until it has removed its
// state. The kernel drops the lock when that process dies, however it dies,
// so the lock is also the proof of liveness: whoever can take it knows that
// nothing serves and that any state file is stale.
const serveLockName = "env.lock"

// errLockHeld means another process holds the serve lock.
var errLockHeld = errors.New("the lab env lock is held by another process")

// lockServe takes the serve lock in dir, retrying for up to wait, and
// returns the function that releases it. It fails with errLockHeld when
// another process still holds it then (or ctx's error when ctx ends first).
// A wait of 0 probes once.
//
// Processes that only probe (ReadState, Down) hold the lock for a moment;
// Serve waits about a second so that such a probe never makes it give up.
func lockServe(ctx context.Context, dir string, wait time.Duration) (unlock func(), err error) {
	path := filepath.Join(dir, serveLockName)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the lab env lock %s: %w", path, err)
	}
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			// Closing the file releases the lock.
			return func() { _ = f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !time.Now().Before(deadline) {
			f.Close()
			return nil, fmt.Errorf("%w (%s)", errLockHeld, path)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// serveLockHeld reports whether a process (this one included) holds the serve lock in dir.
func serveLockHeld(dir string) bool {
	unlock, err := lockServe(context.Background(), dir, 0)
	if err != nil {
		return errors.Is(err, errLockHeld)
	}
	unlock()
	return false
}
