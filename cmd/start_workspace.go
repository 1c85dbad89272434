package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
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

// openStartWorkspace opens the lab's workspace as lab start does (see
// workspace.OpenOrCreate), timed for the start-up screen.
func openStartWorkspace(lab *labs.Lab, dir, lang string) (*startWorkspace, error) {
	start := time.Now()
	ref, created, err := workspace.OpenOrCreate(lab, dir, lang)
	if err != nil {
		return nil, err
	}
	return &startWorkspace{Lab: lab, Dir: ref.Dir, Created: created, Took: time.Since(start)}, nil
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

// progressSettle gathers the events of one change (a check's rename, a
// deleted workspace) into one update of the view.
const progressSettle = 50 * time.Millisecond

// watchProgress follows the progress file, which `lab check` replaces in
// another terminal, from now until ctx ends: the exercises come again after
// every change of it, of its folder or of the workspace. When the workspace
// cannot be watched at all, they come once, saying so.
func (w *startWorkspace) watchProgress(ctx context.Context, lang string) <-chan tui.ExercisesMsg {
	out := make(chan tui.ExercisesMsg)
	changes, err := workspace.Watch(ctx, w.Dir, workspace.ProgressFile, progressSettle)
	goGuarded(func() {
		defer close(out)
		if err != nil {
			msg := w.exercisesMsg(lang)
			if msg.Notice == "" {
				msg.Notice = fmt.Sprintf("%v: the exercises shown here do not follow later checks", err)
			}
			select {
			case out <- msg:
			case <-ctx.Done():
			}
			return
		}
		for range changes {
			select {
			case out <- w.exercisesMsg(lang):
			case <-ctx.Done():
				return
			}
		}
	})
	return out
}
