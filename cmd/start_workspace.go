package cmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/operator-lab/lab/internal/tui"
	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/workspace"
)

// startWorkspace is the learner's workspace `lab start` works with.
type startWorkspace struct {
	Lab *labs.Lab
	Dir string
	// Created: this start made the workspace (or filled an empty folder).
	Created bool
	Took    time.Duration
}

// openOrCreateWorkspace returns the lab's workspace: dir if given, else
// the workspace the current folder is in, else ./lab-LAB. An existing
// workspace is used exactly as it is (`lab init` is the command that
// restores deleted files); a new one is created only in a missing or empty
// folder, so lab never spreads its files into someone else's project.
func openOrCreateWorkspace(labID, dir, lang string) (*startWorkspace, error) {
	lab, err := labs.Get(labID)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if dir == "" {
		if found := enclosingWorkspace(); found != "" {
			id, err := workspace.Detect(found)
			switch {
			case err != nil:
				return nil, fmt.Errorf("%s looks like a lab workspace but is not readable as one: %w (pass --dir to use another folder)", found, err)
			case id != lab.ID:
				return nil, fmt.Errorf("you are inside the workspace of lab %s (%s): start lab %s from outside it, or pass --dir", id, displayDir(found), lab.ID)
			}
			return &startWorkspace{Lab: lab, Dir: found, Took: time.Since(start)}, nil
		}
		dir = workspace.DefaultDir(lab.ID)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace folder %s: %w", dir, err)
	}
	if id, err := workspace.Detect(abs); err == nil {
		if id != lab.ID {
			return nil, fmt.Errorf("%s is a workspace of lab %s, not %s: choose another folder with --dir", dir, id, lab.ID)
		}
		return &startWorkspace{Lab: lab, Dir: abs, Took: time.Since(start)}, nil
	}
	entries, err := os.ReadDir(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("workspace folder %s: %w", dir, err)
	case len(entries) > 0:
		return nil, fmt.Errorf("%s is not empty and not a lab workspace, so lab start leaves it alone: choose a new or empty folder with --dir", dir)
	}
	created, err := workspace.Create(lab, abs, lang)
	if err != nil {
		return nil, fmt.Errorf("create the workspace of lab %s: %w", lab.ID, err)
	}
	return &startWorkspace{Lab: lab, Dir: abs, Created: len(created.Written) > 0, Took: time.Since(start)}, nil
}

// describe is the one-line account of the workspace for the start-up screen
// and the plain stream.
func (w *startWorkspace) describe() string {
	if w.Created {
		return displayDir(w.Dir) + " (created)"
	}
	return displayDir(w.Dir)
}

// exercisesMsg reads the workspace's progress into what the exercises layer
// shows. It never writes: a corrupt progress file is only reported, and
// the next `lab check` rebuilds it.
func (w *startWorkspace) exercisesMsg(lang string) tui.ExercisesMsg {
	msg := tui.ExercisesMsg{Workspace: displayDir(w.Dir), Created: w.Created}
	progress, err := workspace.LoadProgress(w.Dir)
	if _, statErr := os.Stat(w.Dir); statErr != nil {
		msg.Notice = fmt.Sprintf("the workspace %s is gone (%v): `lab init %s --dir %s` creates it again", displayDir(w.Dir), statErr, w.Lab.ID, w.Dir)
	}
	switch {
	case errors.Is(err, workspace.ErrNoProgress):
		progress = workspace.NewProgress(w.Lab.ID)
	case err != nil:
		progress = workspace.NewProgress(w.Lab.ID)
		if msg.Notice == "" {
			msg.Notice = fmt.Sprintf("%v; `lab check` rebuilds it", err)
		}
	}
	for _, e := range w.Lab.Exercises {
		x := tui.Exercise{Number: e.Number, ID: e.ID, Title: e.Title.In(lang), Files: e.Files}
		if p := progress.Exercises[e.ID]; p != nil {
			x.Status, x.CheckedAt = p.Status, p.CheckedAt
		}
		msg.Exercises = append(msg.Exercises, x)
	}
	return msg
}

// progressRetryEvery is how often the live view tries again to watch a
// workspace, or its .lab folder, that is not there: deleted, or not made yet.
const progressRetryEvery = time.Second

// progressSettle gathers the events of one change (a check's rename, a
// deleted workspace) into one update of the view.
const progressSettle = 50 * time.Millisecond

// watchProgress sends the exercises again whenever the progress file
// changes, until ctx ends. When the workspace cannot be watched at all, it
// says so once, on the exercises, and returns.
func (w *startWorkspace) watchProgress(ctx context.Context, lang string, send func(tui.ExercisesMsg)) {
	pw, err := w.openProgressWatch()
	if err != nil {
		msg := w.exercisesMsg(lang)
		if msg.Notice == "" {
			msg.Notice = fmt.Sprintf("%v: the exercises shown here do not follow later checks", err)
		}
		send(msg)
		return
	}
	defer pw.close()
	pw.run(ctx, lang, send)
}

// progressWatch follows the progress file, which `lab check` replaces (by a
// rename, so no half-written state is seen) in another terminal. It
// watches folders, not the file, whose every rename is a new one: the
// workspace for its .lab folder coming and going, and .lab for the file.
type progressWatch struct {
	ws    *startWorkspace
	fsw   *fsnotify.Watcher
	dir   string // the workspace
	state string // its .lab folder
	file  string // the progress file
}

// openProgressWatch begins watching the workspace; changes from then on are
// seen by run.
func (w *startWorkspace) openProgressWatch() (*progressWatch, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", displayDir(w.Dir), err)
	}
	file := workspace.ProgressPath(w.Dir)
	pw := &progressWatch{ws: w, fsw: fsw, dir: w.Dir, state: filepath.Dir(file), file: file}
	pw.add()
	return pw, nil
}

func (pw *progressWatch) close() { _ = pw.fsw.Close() }

// add watches the workspace and its .lab folder where they exist and are
// not watched yet, and reports whether it began a watch.
func (pw *progressWatch) add() (began bool) {
	watched := map[string]bool{}
	for _, p := range pw.fsw.WatchList() {
		watched[p] = true
	}
	for _, p := range []string{pw.dir, pw.state} {
		if !watched[p] && pw.fsw.Add(p) == nil {
			began = true
		}
	}
	return began
}

// run sends the exercises after every change to the progress file, to
// its folder or to the workspace, until ctx ends.
func (pw *progressWatch) run(ctx context.Context, lang string, send func(tui.ExercisesMsg)) {
	retry := time.NewTicker(progressRetryEvery)
	defer retry.Stop()
	var settle <-chan time.Time
	later := func() { settle = time.After(progressSettle) }
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-pw.fsw.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			switch ev.Name {
			case pw.file:
				later()
			case pw.state:
				if ev.Has(fsnotify.Create) {
					pw.add() // before a check renames the file into it
				}
				later()
			case pw.dir:
				// The workspace was deleted or moved away: its .lab watch,
				// if any is left, follows the old folder.
				_ = pw.fsw.Remove(pw.state)
				later()
			}
		case _, ok := <-pw.fsw.Errors:
			if !ok {
				return
			}
			later() // events may have been lost: look again
		case <-retry.C:
			if pw.add() {
				later()
			}
		case <-settle:
			settle = nil
			send(pw.ws.exercisesMsg(lang))
		}
	}
}
