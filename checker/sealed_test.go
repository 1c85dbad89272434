package checker

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSealedBinaries: a binary runs from a copy nothing can change, a
// binary changed after the build is refused, and a build binary that
// changed is removed after the run.
func TestSealedBinaries(t *testing.T) {
	binDir := t.TempDir()
	for _, name := range []string{"a.test", "b.test"} {
		if err := os.WriteFile(filepath.Join(binDir, name), []byte("#!/bin/sh\necho built "+name+"\n"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	s, err := sealBinaries(binDir, []string{"a.test", "b.test"})
	if err != nil {
		t.Fatal(err)
	}

	p, release, err := s.open("a.test")
	if err != nil {
		t.Fatalf("open an untouched binary: %v", err)
	}
	out, err := exec.Command(p).Output()
	if err != nil || strings.TrimSpace(string(out)) != "built a.test" {
		t.Errorf("running the copy: %q, %v", out, err)
	}
	if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
		_, err = f.Write([]byte("forged"))
		f.Close()
		if err == nil {
			t.Error("the copy a binary runs from could be written")
		}
	}
	release()

	if err := os.WriteFile(filepath.Join(binDir, "b.test"), []byte("#!/bin/sh\necho forged\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.open("b.test"); !errors.Is(err, errTampered) {
		t.Errorf("open a binary changed after the build: %v, want errTampered", err)
	}
	if changed := s.verifyBuilt(); len(changed) != 1 || changed[0] != "b.test" {
		t.Errorf("verifyBuilt = %v, want [b.test]", changed)
	}
	if _, err := os.Stat(filepath.Join(binDir, "b.test")); !os.IsNotExist(err) {
		t.Errorf("the changed build binary is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(binDir, "a.test")); err != nil {
		t.Errorf("the untouched build binary: %v", err)
	}
}
