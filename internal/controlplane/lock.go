package controlplane

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/operator-lab/lab/internal/filelock"
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
	unlock, err = filelock.Lock(ctx, path, filelock.Options{Wait: wait, Poll: 20 * time.Millisecond})
	if errors.Is(err, filelock.ErrHeld) {
		return nil, fmt.Errorf("%w (%s)", errLockHeld, path)
	}
	return unlock, err
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
