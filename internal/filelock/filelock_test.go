package filelock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := Lock(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Held: a probe fails at once, a bounded wait fails after it, a wait
	// without bound ends with its context — each telling Busy once.
	if _, err := Lock(context.Background(), path, Options{}); !errors.Is(err, ErrHeld) {
		t.Fatalf("probe of a held lock: %v, want ErrHeld", err)
	}
	busy := 0
	start := time.Now()
	if _, err := Lock(context.Background(), path, Options{Wait: 100 * time.Millisecond, Poll: 10 * time.Millisecond, Busy: func() { busy++ }}); !errors.Is(err, ErrHeld) || time.Since(start) < 100*time.Millisecond {
		t.Fatalf("bounded wait: %v after %s", err, time.Since(start))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path, Options{Wait: -1, Poll: 10 * time.Millisecond, Busy: func() { busy++ }}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("unbounded wait: %v, want the context's end", err)
	}
	if busy != 2 {
		t.Errorf("Busy called %d times over two waits, want 2", busy)
	}
	// Released: the waiter gets it.
	go func() { time.Sleep(30 * time.Millisecond); unlock() }()
	unlock2, err := Lock(context.Background(), path, Options{Wait: -1, Poll: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	unlock2()
}

func TestLockNeverFollowsOrCreatesWhenTold(t *testing.T) {
	dir := t.TempDir()
	if _, err := Lock(context.Background(), filepath.Join(dir, "missing"), Options{MustExist: true}); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("MustExist on a missing file: %v", err)
	}
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.lock")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(context.Background(), link, Options{}); err == nil {
		t.Fatal("a symlinked lock file was followed")
	}
}
