package controlplane

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeBinaries writes executable placeholders for names into dir.
func fakeBinaries(t *testing.T, dir string, names ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\necho "+n+" v0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// isolatedStore points the setup-envtest store at a fresh directory.
func isolatedStore(t *testing.T) string {
	t.Helper()
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	t.Setenv("KUBEBUILDER_ASSETS", "")
	root, err := StoreRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func TestFindPrefersCompleteKubebuilderAssets(t *testing.T) {
	root := isolatedStore(t)
	fakeBinaries(t, filepath.Join(root, storeDirName("1.37.0")), BinaryNames...)
	assets := t.TempDir()
	fakeBinaries(t, assets, BinaryNames...)
	t.Setenv("KUBEBUILDER_ASSETS", assets)

	b, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	if b.Dir != assets || b.Source != "KUBEBUILDER_ASSETS" {
		t.Fatalf("Find() = %+v, want KUBEBUILDER_ASSETS %s", b, assets)
	}
}

func TestFindSkipsIncompleteAndPicksNewestPatchOfTheMinor(t *testing.T) {
	root := isolatedStore(t)
	assets := t.TempDir()
	fakeBinaries(t, assets, "etcd") // incomplete: falls through to the store
	t.Setenv("KUBEBUILDER_ASSETS", assets)
	fakeBinaries(t, filepath.Join(root, storeDirName("1.37.0")), BinaryNames...)
	fakeBinaries(t, filepath.Join(root, storeDirName("1.37.5")), BinaryNames...)
	fakeBinaries(t, filepath.Join(root, storeDirName("1.37.9")), "etcd", "kube-apiserver") // no kubectl
	fakeBinaries(t, filepath.Join(root, storeDirName("1.38.0")), BinaryNames...)           // other minor

	b, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, storeDirName("1.37.5")); b.Dir != want || b.Source != "store" {
		t.Fatalf("Find() = %+v, want store %s", b, want)
	}
}

func TestFindReportsWhatIsMissing(t *testing.T) {
	isolatedStore(t)
	assets := t.TempDir()
	fakeBinaries(t, assets, "etcd")
	t.Setenv("KUBEBUILDER_ASSETS", assets)
	_, err := Find()
	if !errors.Is(err, ErrBinariesNotFound) {
		t.Fatalf("Find() error = %v, want ErrBinariesNotFound", err)
	}
	if !strings.Contains(err.Error(), "kube-apiserver, kubectl") {
		t.Fatalf("error %q does not say which binaries are missing", err)
	}
}

func TestSetupReturnsAtOnceWhenTheStoreIsComplete(t *testing.T) {
	root := isolatedStore(t)
	dir := filepath.Join(root, storeDirName("1.37.2"))
	fakeBinaries(t, dir, BinaryNames...)
	// IndexURL points nowhere: a found store must not touch the network or build.
	b, err := Setup(context.Background(), SetupOptions{IndexURL: "http://127.0.0.1:1/index.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Dir != dir {
		t.Fatalf("Setup() = %s, want %s", b.Dir, dir)
	}
}

func TestInstallIntoLeavesNothingBehindWhenFillingFails(t *testing.T) {
	root := isolatedStore(t)
	dest := filepath.Join(root, storeDirName("1.37.2"))
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	err := installInto(dest, func(tmp string) error {
		fakeBinaries(t, tmp, "etcd") // half done, then interrupted
		return errors.New("interrupted")
	})
	if err == nil || err.Error() != "interrupted" {
		t.Fatalf("installInto error = %v, want the fill error", err)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 0 {
		t.Fatalf("store holds %v after a failed install, want nothing", entries)
	}

	err = installInto(dest, func(tmp string) error { fakeBinaries(t, tmp, "etcd"); return nil })
	if err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Fatalf("installInto of an incomplete set: error = %v, want incomplete", err)
	}
	if _, statErr := os.Stat(dest); !os.IsNotExist(statErr) {
		t.Fatalf("an incomplete set was installed at %s", dest)
	}
}

func TestInstallIntoReplacesAnIncompleteDirectory(t *testing.T) {
	root := isolatedStore(t)
	dest := filepath.Join(root, storeDirName("1.37.2"))
	fakeBinaries(t, dest, "etcd")
	if err := installInto(dest, func(tmp string) error { fakeBinaries(t, tmp, BinaryNames...); return nil }); err != nil {
		t.Fatal(err)
	}
	if missing := missingBinaries(dest); len(missing) != 0 {
		t.Fatalf("after install %s misses %v", dest, missing)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 {
		t.Fatalf("store holds %d entries, want only %s", len(entries), dest)
	}
}

func TestLockStoreMakesASecondSetupWait(t *testing.T) {
	root := t.TempDir()
	var log strings.Builder
	unlock, err := lockStore(context.Background(), root, &log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	var waitLog strings.Builder
	if _, err := lockStore(ctx, root, &waitLog); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock while held: err = %v, want to wait until the deadline", err)
	}
	if !strings.Contains(waitLog.String(), "waiting") {
		t.Fatalf("the waiting setup did not say so: %q", waitLog.String())
	}
	unlock()
	unlock2, err := lockStore(context.Background(), root, &log)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	unlock2()
}
