package cmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

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

// progressPollEvery is how often the live view looks at the progress file,
// which `lab check` rewrites in another terminal.
const progressPollEvery = time.Second

// watchProgress sends the exercises again whenever the progress file
// changes, until ctx ends. Polling the file's size and time is enough: the
// checker replaces the file in one rename, so no half-written state is seen.
func (w *startWorkspace) watchProgress(ctx context.Context, lang string, send func(tui.ExercisesMsg)) {
	stamp := func() string {
		st, err := os.Stat(workspace.ProgressPath(w.Dir))
		if err != nil {
			return err.Error()
		}
		return fmt.Sprint(st.ModTime().UnixNano(), st.Size())
	}
	last := stamp()
	tick := time.NewTicker(progressPollEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if now := stamp(); now != last {
				last = now
				send(w.exercisesMsg(lang))
			}
		}
	}
}
