package checker

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSealedBinaries: a binary runs from a copy made at once and nothing
// can change, whatever happens to the build's file later; a build binary
// that changed is removed after the run, an untouched one kept.
func TestSealedBinaries(t *testing.T) {
	binDir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(binDir, name), []byte("#!/bin/sh\necho "+text+"\n"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write("a.test", "built a")
	write("b.test", "built b")
	s, err := sealBinaries(binDir, []string{"a.test", "b.test"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()

	write("b.test", "built B") // the same size: only the content tells
	for name, want := range map[string]string{"a.test": "built a", "b.test": "built b"} {
		p, err := s.path(name)
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(p).Output()
		if err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("running the copy of %s: %q, %v; want %q", name, out, err, want)
		}
		if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			_, err = f.Write([]byte("forged"))
			f.Close()
			if err == nil {
				t.Errorf("the copy %s runs from could be written", name)
			}
		}
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
