package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// A Filter says what Watch follows below its folder: the folders to watch
// (isDir) and the files whose changes count. rel is the path relative to
// the watched folder, with forward slashes.
type Filter func(rel string, isDir bool) bool

// SourceFiles are the files a check reads — Go files, go.mod and go.sum —
// in every folder but hidden ones (.git, lab's own .lab).
func SourceFiles(rel string, isDir bool) bool {
	name := path.Base(rel)
	if isDir {
		return !strings.HasPrefix(name, ".")
	}
	return strings.HasSuffix(name, ".go") || name == "go.mod" || name == "go.sum"
}

// ProgressFile is the workspace's progress file, and the state folder that
// holds it. `lab check` replaces the file by a rename, which is a new file
// each time, so its folder is what is watched.
func ProgressFile(rel string, isDir bool) bool {
	if isDir {
		return rel == StateDir
	}
	return rel == filepath.ToSlash(ProgressPath(""))
}

// watchRetry is how often Watch looks again for its folder when it is not
// there: deleted, moved away, or not made yet.
const watchRetry = time.Second

// Watch follows the changes below dir that filter admits, from when it
// returns until ctx ends, when the channel closes. Each value is what
// changed in one burst — paths relative to dir, with forward slashes,
// sorted — once no more change came for debounce (an editor's save writes,
// renames and chmods; a check's rename is two events). A receiver that is
// busy gets every change since its last receive in the next value.
//
// "." means anything may have changed: dir itself went away or came back,
// or events were lost. A folder that appears (made, moved in, or dir coming
// back, which is looked for every second) is watched from then on, and the
// admitted files already in it count as changed: they were written before
// any event could tell. Only an error starting to watch an existing dir is
// returned; a dir that does not exist yet is waited for.
func Watch(ctx context.Context, dir string, filter Filter, debounce time.Duration) (<-chan []string, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	w := &watcher{root: filepath.Clean(dir), filter: filter, fsw: fsw, dirs: map[string]bool{}, changed: map[string]bool{}}
	if _, err := w.addTree(w.root); err != nil && !errors.Is(err, fs.ErrNotExist) {
		_ = fsw.Close()
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	out := make(chan []string)
	go w.run(ctx, debounce, out)
	return out, nil
}

// watcher is one Watch: the folders it watches and what changed since the
// last value it sent.
type watcher struct {
	root    string
	filter  Filter
	fsw     *fsnotify.Watcher
	dirs    map[string]bool
	changed map[string]bool
}

func (w *watcher) run(ctx context.Context, debounce time.Duration, out chan<- []string) {
	defer close(out)
	defer func() { _ = w.fsw.Close() }()
	retry := time.NewTicker(watchRetry)
	defer retry.Stop()
	var (
		settle <-chan time.Time
		send   chan<- []string // out once the changes have settled
		batch  []string
	)
	mark := func(rels ...string) {
		if len(rels) == 0 {
			return
		}
		for _, rel := range rels {
			w.changed[rel] = true
		}
		settle, send = time.After(debounce), nil
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			mark(w.handle(ev)...)
		case _, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			mark(".") // the system's queue overflowed: events were lost
		case <-retry.C:
			if !w.dirs[w.root] {
				if found, _ := w.addTree(w.root); w.dirs[w.root] {
					mark(append(found, ".")...)
				}
			}
		case <-settle:
			settle, send, batch = nil, out, slices.Sorted(maps.Keys(w.changed))
		case send <- batch:
			send, w.changed = nil, map[string]bool{}
		}
	}
}

// handle keeps the watches up to date with one event and returns what it
// changed.
func (w *watcher) handle(ev fsnotify.Event) (changed []string) {
	if ev.Op == fsnotify.Chmod {
		return nil // the content is the same
	}
	rel := w.rel(ev.Name)
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		// A watched folder gone or moved away: the watches of the folders
		// below it (moved with it) would report under the old names.
		if w.forget(ev.Name) {
			changed = append(changed, rel)
		}
	}
	if ev.Has(fsnotify.Create) {
		if st, err := os.Stat(ev.Name); err == nil && st.IsDir() {
			if ev.Name != w.root && !w.filter(rel, true) {
				return changed
			}
			found, _ := w.addTree(ev.Name)
			return append(changed, found...)
		}
	}
	if ev.Name != w.root && w.filter(rel, false) {
		changed = append(changed, rel)
	}
	return changed
}

// addTree watches top and the folders below it that the filter admits and
// are not watched yet, and returns the admitted files in them.
func (w *watcher) addTree(top string) (found []string, err error) {
	err = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		rel := w.rel(p)
		switch {
		case err != nil && p == top:
			return err
		case err != nil:
			return nil // gone while walking: its removal is an event of its own
		case !d.IsDir():
			if w.filter(rel, false) {
				found = append(found, rel)
			}
			return nil
		case p != w.root && !w.filter(rel, true):
			return filepath.SkipDir
		case w.dirs[p]:
			return nil
		}
		if err := w.fsw.Add(p); err != nil {
			return err
		}
		w.dirs[p] = true
		return nil
	})
	return found, err
}

// forget stops watching dir and every folder below it, and reports whether
// dir was watched.
func (w *watcher) forget(dir string) (watched bool) {
	for p := range w.dirs {
		if p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) {
			_ = w.fsw.Remove(p) // gone already, for a deleted folder
			delete(w.dirs, p)
			watched = watched || p == dir
		}
	}
	return watched
}

// rel is p relative to the watched folder, with forward slashes.
func (w *watcher) rel(p string) string {
	rel, err := filepath.Rel(w.root, p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(rel)
}
