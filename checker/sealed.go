package checker

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// sealedBinaries guard the check binaries from the learner's code. go test
// -c writes them into a folder that outlives the run (an up-to-date binary
// there is not linked again, which is most of a warm check's speed), and
// the learner's code runs with the user's rights: code in one exercise's
// binary could replace another's before it runs, or for the next run. So
// each binary's digest is taken right after the build, before any of the
// learner's code has run; each runs from an immutable copy made and
// verified against that digest just before it starts (immutableCopy); and
// after the run a build binary that changed is removed, so the next build
// links it afresh.
type sealedBinaries struct {
	binDir string
	sums   map[string][sha256.Size]byte // name → digest right after the build
}

// errTampered says a binary no longer is what the build made.
var errTampered = errors.New("the check binary was changed after lab built it and before it ran")

// sealBinaries takes the digests of the named binaries in binDir.
func sealBinaries(binDir string, names []string) (*sealedBinaries, error) {
	s := &sealedBinaries{binDir: binDir, sums: map[string][sha256.Size]byte{}}
	for _, name := range names {
		sum, err := digest(filepath.Join(binDir, name))
		if err != nil {
			return nil, fmt.Errorf("read check binary %s: %w", name, err)
		}
		s.sums[name] = sum
	}
	return s, nil
}

// open returns the path of an immutable copy of a binary to run, and a
// function to call once it has ended; errTampered if it changed since the
// build.
func (s *sealedBinaries) open(name string) (string, func(), error) {
	want, ok := s.sums[name]
	if !ok {
		return "", nil, fmt.Errorf("check binary %s was not built in this run", name)
	}
	src, err := os.Open(filepath.Join(s.binDir, name))
	if err != nil {
		return "", nil, fmt.Errorf("open check binary %s: %w", name, err)
	}
	defer src.Close()
	return immutableCopy(src, name, want)
}

// verifyBuilt removes the build's binaries that no longer match what was
// built, and returns their names.
func (s *sealedBinaries) verifyBuilt() []string {
	var changed []string
	for name, want := range s.sums {
		p := filepath.Join(s.binDir, name)
		if sum, err := digest(p); err == nil && sum == want {
			continue
		}
		_ = os.Remove(p)
		changed = append(changed, name)
	}
	return changed
}

// copyVerified copies src to dst and fails with errTampered unless what it
// copied has the digest want.
func copyVerified(dst io.Writer, src io.Reader, want [sha256.Size]byte) error {
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(dst, h), src); err != nil {
		return err
	}
	if [sha256.Size]byte(h.Sum(nil)) != want {
		return errTampered
	}
	return nil
}

func digest(path string) ([sha256.Size]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return [sha256.Size]byte{}, err
	}
	return [sha256.Size]byte(h.Sum(nil)), nil
}
