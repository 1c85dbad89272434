package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/operator-lab/lab/labs"
)

// ProgressVersion is the progress file format this build writes and reads.
const ProgressVersion = 1

// Exercise statuses, as the checker reports them (Exercism's vocabulary).
const (
	StatusPass  = "pass"
	StatusFail  = "fail"
	StatusError = "error"
)

// Progress is what lab remembers about one workspace between runs.
type Progress struct {
	Version   int                          `json:"version"`
	Lab       string                       `json:"lab"`
	Exercises map[string]*ExerciseProgress `json:"exercises"`
}

// ExerciseProgress is one exercise's last check and how far into its hints
// the learner is.
type ExerciseProgress struct {
	// Status is the last check's result: pass, fail or error ("" = never checked).
	Status     string    `json:"status,omitempty"`
	CheckedAt  time.Time `json:"checkedAt,omitzero"`
	HintsShown int       `json:"hintsShown,omitempty"`
	// EverPassed stays true once the exercise passed, so its solution can be
	// shown even after later edits break it again.
	EverPassed bool `json:"everPassed,omitempty"`
}

// NewProgress is the progress of a workspace nobody has checked yet.
func NewProgress(labID string) *Progress {
	return &Progress{Version: ProgressVersion, Lab: labID, Exercises: map[string]*ExerciseProgress{}}
}

// Exercise returns the progress entry of one exercise, creating it.
func (p *Progress) Exercise(id string) *ExerciseProgress {
	if p.Exercises == nil {
		p.Exercises = map[string]*ExerciseProgress{}
	}
	e := p.Exercises[id]
	if e == nil {
		e = &ExerciseProgress{}
		p.Exercises[id] = e
	}
	return e
}

// Record stores a check result.
func (p *Progress) Record(id, status string, at time.Time) {
	e := p.Exercise(id)
	e.Status, e.CheckedAt = status, at
	if status == StatusPass {
		e.EverPassed = true
	}
}

// ProgressPath is where a workspace's progress lives.
func ProgressPath(dir string) string { return filepath.Join(dir, StateDir, "progress.json") }

// ErrNoProgress means the workspace has no progress file yet.
var ErrNoProgress = errors.New("no progress file")

// CorruptProgressError means the progress file exists but cannot be read as progress.
type CorruptProgressError struct {
	Path string
	Err  error
}

func (e *CorruptProgressError) Error() string {
	return fmt.Sprintf("progress file %s is corrupt: %v", e.Path, e.Err)
}

func (e *CorruptProgressError) Unwrap() error { return e.Err }

// LoadProgress reads the workspace's progress file. A file that names a lab
// this build does not have, or another lab than the one go.mod's module
// belongs to, is corrupt: go.mod decides which lab a workspace is. Negative
// hint counts are repaired to zero.
func LoadProgress(dir string) (*Progress, error) {
	path := ProgressPath(dir)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoProgress
	}
	if err != nil {
		return nil, fmt.Errorf("read progress: %w", err)
	}
	var p Progress
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, &CorruptProgressError{Path: path, Err: err}
	}
	switch {
	case p.Version != ProgressVersion:
		return nil, &CorruptProgressError{Path: path, Err: fmt.Errorf("version %d, this lab reads %d", p.Version, ProgressVersion)}
	case p.Lab == "":
		return nil, &CorruptProgressError{Path: path, Err: errors.New("no lab id")}
	}
	if err := p.checkLab(dir); err != nil {
		return nil, &CorruptProgressError{Path: path, Err: err}
	}
	if p.Exercises == nil {
		p.Exercises = map[string]*ExerciseProgress{}
	}
	for _, e := range p.Exercises {
		if e != nil && e.HintsShown < 0 {
			e.HintsShown = 0
		}
	}
	return &p, nil
}

// checkLab says what is wrong with the progress file's lab id: a lab this
// build does not have, or not the lab of dir's go.mod.
func (p *Progress) checkLab(dir string) error {
	if _, err := labs.Get(p.Lab); err != nil {
		return fmt.Errorf("it names lab %q, which this lab build does not have", p.Lab)
	}
	lab, err := labOfGoMod(dir)
	switch {
	case err != nil || lab == nil:
		return nil // go.mod cannot tell; the progress file's lab stands
	case lab.ID != p.Lab:
		return fmt.Errorf("it names lab %s, but go.mod's module %s is lab %s's", p.Lab, lab.Module, lab.ID)
	}
	return nil
}

// Hints are shown by two commands and counted once, in HintsShown, which
// `lab list` reports: `lab hint` shows the next one (NextHint), and `lab
// check` beside a failure reminds of the last one shown, or shows the
// first (CheckHint) — never one further, so checking does not give the
// answer away. Whichever printed a hint records it with ShowHint.

// NextHint is the index, among n hints, of the hint to show next: the
// first one not shown yet, or the last one once all were.
func (e *ExerciseProgress) NextHint(n int) int {
	shown := 0
	if e != nil {
		shown = max(e.HintsShown, 0)
	}
	return max(min(shown, n-1), 0)
}

// CheckHint is the index, among n hints, of the hint a check prints beside
// a failure: the last one shown, or the first when none was.
func (e *ExerciseProgress) CheckHint(n int) int {
	shown := 0
	if e != nil {
		shown = e.HintsShown
	}
	return max(min(shown, n)-1, 0)
}

// ShowHint records that the hint at index i was shown: the count of hints
// shown only grows.
func (e *ExerciseProgress) ShowHint(i int) { e.HintsShown = max(e.HintsShown, i+1) }

// LoadOrRebuildProgress returns the workspace's progress. A missing file
// gives fresh progress; a corrupt one is moved aside (its new name is in the
// returned notice) and replaced by fresh progress, which the next check
// fills in again.
func LoadOrRebuildProgress(dir, labID string) (p *Progress, notice string, err error) {
	p, err = LoadProgress(dir)
	var corrupt *CorruptProgressError
	switch {
	case err == nil:
		return p, "", nil
	case errors.Is(err, ErrNoProgress):
		return NewProgress(labID), "", nil
	case errors.As(err, &corrupt):
		aside, moveErr := moveAside(corrupt.Path, corrupt.Path+".corrupt-"+time.Now().Format("20060102-150405"))
		if moveErr != nil {
			return nil, "", fmt.Errorf("%w (and moving it aside failed: %w)", err, moveErr)
		}
		return NewProgress(labID), fmt.Sprintf("%v; moved it to %s and starting fresh (a check rebuilds it)", err, aside), nil
	default:
		return nil, "", err
	}
}

// moveAside renames path to base, or to base-2, base-3 … when that name is
// taken: a link never replaces an existing file (a rename would), so a file
// set aside earlier in the same second is not lost.
func moveAside(path, base string) (string, error) {
	for i := 1; ; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		err := os.Link(path, name)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		return name, os.Remove(path)
	}
}

// SaveProgress writes the workspace's progress file.
func SaveProgress(dir string, p *Progress) error {
	p.Version = ProgressVersion
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("encode progress: %w", err)
	}
	return writeFileAtomic(ProgressPath(dir), append(b, '\n'), 0o644)
}
