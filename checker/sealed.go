package checker

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// sealedBinaries guard the check binaries from the learner's code. go test
// -c writes them into a folder that outlives the run (an up-to-date binary
// there is not linked again, which is most of a warm check's speed), and
// the learner's code runs with the user's rights: code in one exercise's
// binary could replace another's before it runs, or for the next run. So
// right after the build, before any of the learner's code has run, each
// binary is copied to where nothing can change it (immutableCopy) and runs
// from there; after the run, a built binary that no longer matches its
// copy is removed, so the next build links it afresh.
type sealedBinaries struct {
	binDir string
	copies map[string]*os.File    // name → the immutable copy
	built  map[string]os.FileInfo // name → the built binary, as it was copied
}

// sealBinaries copies the named binaries of binDir, a few at a time.
func sealBinaries(binDir string, names []string) (*sealedBinaries, error) {
	s := &sealedBinaries{binDir: binDir, copies: map[string]*os.File{}, built: map[string]os.FileInfo{}}
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		errs  []error
		slots = make(chan struct{}, 2)
	)
	for _, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			f, info, err := copyBinary(filepath.Join(binDir, name), name)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("copy check binary %s: %w", name, err))
				return
			}
			s.copies[name], s.built[name] = f, info
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		s.close()
		return nil, errs[0]
	}
	return s, nil
}

func copyBinary(path, name string) (*os.File, os.FileInfo, error) {
	src, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer src.Close()
	info, err := src.Stat()
	if err != nil {
		return nil, nil, err
	}
	f, err := immutableCopy(src, name)
	return f, info, err
}

// path is what to run for a binary.
func (s *sealedBinaries) path(name string) (string, error) {
	f, ok := s.copies[name]
	if !ok {
		return "", fmt.Errorf("check binary %s was not built in this run", name)
	}
	return execPath(f), nil
}

// verifyBuilt removes the build's binaries that no longer match their
// copies, and returns their names.
func (s *sealedBinaries) verifyBuilt() []string {
	var changed []string
	for name, f := range s.copies {
		p := filepath.Join(s.binDir, name)
		if now, err := os.Stat(p); err == nil && untouched(s.built[name], now) {
			continue // as cheap as a stat where the system tells (linux)
		}
		if same, err := sameContent(p, f); err == nil && same {
			continue
		}
		_ = os.Remove(p)
		changed = append(changed, name)
	}
	return changed
}

// close lets the copies go.
func (s *sealedBinaries) close() {
	for _, f := range s.copies {
		releaseCopy(f)
	}
}

// sameContent says whether the file at path holds what f holds.
func sameContent(path string, f *os.File) (bool, error) {
	a, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer a.Close()
	infoA, err := a.Stat()
	if err != nil {
		return false, err
	}
	infoB, err := f.Stat()
	if err != nil {
		return false, err
	}
	if infoA.Size() != infoB.Size() {
		return false, nil
	}
	b := io.NewSectionReader(f, 0, infoB.Size())
	bufA, bufB := make([]byte, 1<<20), make([]byte, 1<<20)
	for {
		n, errA := io.ReadFull(a, bufA)
		if _, errB := io.ReadFull(b, bufB[:n]); errB != nil && n > 0 {
			return false, errB
		}
		if !bytes.Equal(bufA[:n], bufB[:n]) {
			return false, nil
		}
		if errA == io.EOF || errA == io.ErrUnexpectedEOF {
			return true, nil
		}
		if errA != nil {
			return false, errA
		}
	}
}
