package labtest

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// Snapshot is every file under a folder, by path relative to it, with its
// content hash: enough to tell that a command left a learner's workspace
// byte for byte as it was.
type Snapshot map[string][32]byte

// TakeSnapshot hashes every file under dir, failing t if it cannot.
func TakeSnapshot(t testing.TB, dir string) Snapshot {
	t.Helper()
	snap, err := SnapshotOf(dir)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// SnapshotOf is TakeSnapshot for a goroutine that may not fail a test.
func SnapshotOf(dir string) (Snapshot, error) {
	out := Snapshot{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		out[rel] = sha256.Sum256(b)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", dir, err)
	}
	return out, nil
}

// Changes lists the files added, removed or changed in later, sorted.
func (s Snapshot) Changes(later Snapshot) []string {
	var out []string
	for f, h := range s {
		if other, ok := later[f]; !ok {
			out = append(out, f+" (removed)")
		} else if other != h {
			out = append(out, f+" (changed)")
		}
	}
	for f := range later {
		if _, ok := s[f]; !ok {
			out = append(out, f+" (added)")
		}
	}
	sort.Strings(out)
	return out
}
