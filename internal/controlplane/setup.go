package controlplane

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/operator-lab/lab/internal/filelock"
)

// SetupOptions control how Setup obtains the binaries.
type SetupOptions struct {
	// FromSource skips the search and the download and builds from Go module sources.
	FromSource bool
	// IndexURL is the envtest release index to download from; empty means
	// setup-envtest's default. "none" skips the download.
	IndexURL string
	// Log receives progress lines (which binary, elapsed time). Nil discards them.
	Log io.Writer
}

// Setup returns a complete set of control-plane binaries, obtaining them if
// needed: found ($KUBEBUILDER_ASSETS, then the setup-envtest store), else
// downloaded from the envtest release index, else built from Go module
// sources. Whatever it obtains is installed atomically into the store, under
// a lock so two setups never download or build at once.
func Setup(ctx context.Context, opts SetupOptions) (Binaries, error) {
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	if !opts.FromSource {
		if b, err := Find(); err == nil {
			return b, nil
		}
	}
	dest, err := StoreDir()
	if err != nil {
		return Binaries{}, err
	}
	root := filepath.Dir(dest)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return Binaries{}, fmt.Errorf("create the binary store %s: %w", root, err)
	}
	unlock, err := lockStore(ctx, root, log)
	if err != nil {
		return Binaries{}, err
	}
	defer unlock()
	removeStaleTemps(root)

	if !opts.FromSource {
		// Another setup may have finished while this one waited for the lock.
		if b, err := Find(); err == nil {
			return b, nil
		}
		if opts.IndexURL != "none" {
			start := time.Now()
			err := installInto(dest, func(tmp string) error { return download(ctx, opts.IndexURL, tmp, log) })
			if err == nil {
				fmt.Fprintf(log, "downloaded control-plane binaries in %s\n", time.Since(start).Round(time.Millisecond))
				return Binaries{Dir: dest, Source: "download"}, nil
			}
			if ctx.Err() != nil {
				return Binaries{}, ctx.Err()
			}
			fmt.Fprintf(log, "download not possible (%v); building from Go module sources instead\n", err)
		}
	}
	if err := installInto(dest, func(tmp string) error { return buildFromSource(ctx, tmp, log) }); err != nil {
		return Binaries{}, err
	}
	return Binaries{Dir: dest, Source: "build"}, nil
}

const tempPrefix = ".lab-tmp-"

// installInto fills a fresh temporary directory beside dest and renames it
// into place only once it holds every binary, so an interrupted setup never
// leaves a half-filled store directory behind.
func installInto(dest string, fill func(tmp string) error) error {
	root := filepath.Dir(dest)
	tmp, err := os.MkdirTemp(root, tempPrefix)
	if err != nil {
		return fmt.Errorf("create a temporary directory in %s: %w", root, err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("make %s readable: %w", tmp, err)
	}
	if err := fill(tmp); err != nil {
		return err
	}
	if missing := missingBinaries(tmp); len(missing) > 0 {
		return fmt.Errorf("obtained binaries are incomplete: missing %v", missing)
	}
	if _, err := os.Stat(dest); err == nil {
		// An incomplete (or, with --from-source, an older) set is moved aside
		// first: rename cannot replace a non-empty directory.
		old := dest + ".old-" + filepath.Base(tmp)
		if err := os.Rename(dest, old); err != nil {
			return fmt.Errorf("move the previous %s aside: %w", dest, err)
		}
		defer func() { _ = os.RemoveAll(old) }()
	}
	if err := os.Rename(tmp, dest); err != nil {
		return fmt.Errorf("install binaries into %s: %w", dest, err)
	}
	return nil
}

// removeStaleTemps deletes what interrupted setups left; it runs under the
// store lock, so no live setup owns them.
func removeStaleTemps(root string) {
	for _, pattern := range []string{tempPrefix + "*", "*.old-" + tempPrefix + "*"} {
		matches, _ := filepath.Glob(filepath.Join(root, pattern))
		for _, m := range matches {
			_ = os.RemoveAll(m)
		}
	}
}

// lockStore takes an exclusive lock on the store, waiting (and saying so
// on log) while another lab setup holds it.
func lockStore(ctx context.Context, root string, log io.Writer) (func(), error) {
	path := filepath.Join(root, ".lab-setup.lock")
	return filelock.Lock(ctx, path, filelock.Options{Wait: -1, Poll: 500 * time.Millisecond, Busy: func() {
		fmt.Fprintf(log, "another lab setup is obtaining the binaries; waiting for it (lock %s)\n", path)
	}})
}
