package labs

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/operator-lab/lab/operator/api/v1alpha1"
	"github.com/operator-lab/lab/operator/crds"
)

// SchemaVersion is the lab.yaml format this build reads. A lab.yaml with
// another schemaVersion is rejected rather than half-understood.
const SchemaVersion = 1

// Languages every text (titles, instructions, hints) must exist in.
var Languages = []string{"en", "ru"}

// DefaultLanguage is used when no language is asked for.
const DefaultLanguage = "en"

// TODOMarker marks the places a learner has to change; every starter file
// carries at least one.
const TODOMarker = "TODO(lab)"

// The folders of a lab definition.
const (
	commonDir       = "_common"
	starterDir      = "_starter"
	solutionDir     = "_solution"
	checksDir       = "_checks"
	runnerDir       = "_runner"
	instructionsDir = "instructions"
)

// Text is a string in every supported language.
type Text map[string]string

// In returns the text in lang, falling back to English.
func (t Text) In(lang string) string {
	if s, ok := t[lang]; ok && s != "" {
		return s
	}
	return t[DefaultLanguage]
}

// Hints are an exercise's progressive hints, per language, vaguest first.
type Hints map[string][]string

// In returns the hints in lang, falling back to English.
func (h Hints) In(lang string) []string {
	if hs, ok := h[lang]; ok && len(hs) > 0 {
		return hs
	}
	return h[DefaultLanguage]
}

// Duration is a time.Duration written as Go duration text ("90s") in lab.yaml.
type Duration struct{ time.Duration }

// UnmarshalJSON parses duration text.
func (d *Duration) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return fmt.Errorf("duration must be text like \"90s\", got %s", b)
	}
	parsed, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("parse duration %q: %w", s, err)
	}
	d.Duration = parsed
	return nil
}

// Lab is one lab as declared in its lab.yaml.
type Lab struct {
	SchemaVersion int    `json:"schemaVersion"`
	ID            string `json:"id"`
	Title         Text   `json:"title"`
	// Module is the Go module path of the learner's workspace.
	Module string `json:"module"`
	// CRDs are manifests (relative to the lab folder) installed on the
	// control plane before the checks run.
	CRDs []string `json:"crds"`
	// API, when set, gives the exercises the reference operator's API types
	// instead of types of their own: see API.
	API *API `json:"api"`
	// Common lists the files (relative to the workspace root) every workspace
	// gets from _common/ that belong to no exercise.
	Common    []string    `json:"common"`
	Exercises []*Exercise `json:"exercises"`
	// Runner is how `lab start LAB --mine` runs the learner's own controller.
	Runner *Runner `json:"runner"`

	root fs.FS // the lab folder
	// apiFiles are the operator's API type files (names in v1alpha1.Sources)
	// a lab with an API copies into its workspace.
	apiFiles []string
}

// API says that a lab's exercises use the reference operator's API package
// (operator/api/v1alpha1): its type files are copied into the workspace's
// APIDir, and the lab's CRDs are the operator's CRDs for Kinds, moved to
// Group. The lab's _common/ holds only that package's groupversion_info.go
// (APIDir/groupversion_info.go), which declares Group. A group of its own
// keeps the learner's objects apart from the reference operator's on one
// control plane; the schema stays the operator's, field for field.
type API struct {
	Group string   `json:"group"`
	Kinds []string `json:"kinds"`
}

// APIDir is where a workspace holds its API package.
const APIDir = "api/v1alpha1"

// Runner describes the program that runs a learner's controller for
// `lab start --mine`: a main package (in _runner/) compiled inside the
// learner's module with the observation layer, and the sample objects the
// live view creates for it.
type Runner struct {
	// Exercise is the exercise whose controller runs (the UI names it).
	Exercise string `json:"exercise"`
	// Program is the runner's main.go, relative to the lab folder.
	Program string `json:"program"`
	Sample  Sample `json:"sample"`
}

// Sample is the object the live view creates, changes and deletes for the
// learner's controller.
type Sample struct {
	// Kind is one of the lab's CRD kinds.
	Kind string `json:"kind"`
	// Name is the first object's name; later ones are Name-2, Name-3, …
	Name string         `json:"name"`
	Spec map[string]any `json:"spec"`
	// Update is the spec field an update changes: a number is incremented,
	// text gets a new suffix.
	Update string `json:"update"`
	// Invalid, when set, is a spec the controller must give up on for good
	// (the permanent-error demo).
	Invalid map[string]any `json:"invalid,omitempty"`
}

// RunnerProgram returns the runner's main.go.
func (l *Lab) RunnerProgram() ([]byte, error) {
	if l.Runner == nil {
		return nil, fmt.Errorf("lab %s has no runner for --mine", l.ID)
	}
	return fs.ReadFile(l.root, l.Runner.Program)
}

// Exercise is one graded exercise of a lab.
type Exercise struct {
	ID    string `json:"id"`
	Title Text   `json:"title"`
	// Package is the workspace folder (one Go package) the exercise lives
	// in; its checks are added there.
	Package string `json:"package"`
	// Files are the learner's files for the exercise (relative to the
	// workspace root); each has a starter and a solution.
	Files []string `json:"files"`
	// Checks are the hidden test files (relative to _checks/).
	Checks []string `json:"checks"`
	Hints  Hints    `json:"hints"`
	// Timeout bounds one run of the exercise's checks; past it the run is
	// reported as hanging.
	Timeout Duration `json:"timeout"`
	// Race runs the checks with the race detector.
	Race bool `json:"race"`
	// Points are what passing the exercise is worth in a score (the
	// report's, JUnit's, a classroom's); a workspace's classroom file may
	// weigh it otherwise (workspace.ClassroomFile).
	Points int `json:"points"`

	// Number is the exercise's 1-based position in its lab.
	Number int `json:"-"`
	lab    *Lab
}

// Lab returns the lab the exercise belongs to.
func (e *Exercise) Lab() *Lab { return e.lab }

// Instructions returns the exercise's instructions (Markdown) in lang,
// falling back to English.
func (e *Exercise) Instructions(lang string) string {
	for _, l := range []string{lang, DefaultLanguage} {
		b, err := fs.ReadFile(e.lab.root, path.Join(instructionsDir, l, e.ID+".md"))
		if err == nil {
			return string(b)
		}
	}
	return ""
}

// Starter returns the starter version of one of the exercise's files.
func (e *Exercise) Starter(file string) ([]byte, error) {
	return fs.ReadFile(e.lab.root, path.Join(starterDir, file))
}

// Solution returns the reference solution of one of the exercise's files.
func (e *Exercise) Solution(file string) ([]byte, error) {
	return fs.ReadFile(e.lab.root, path.Join(solutionDir, file))
}

// CheckFile returns one of the exercise's hidden check files.
func (e *Exercise) CheckFile(file string) ([]byte, error) {
	return fs.ReadFile(e.lab.root, path.Join(checksDir, file))
}

// SharedFiles lists the files (relative to the workspace root) every
// workspace of the lab gets that belong to no exercise: the _common/ files
// and, for a lab with an API, the operator's API type files.
func (l *Lab) SharedFiles() []string {
	out := slices.Clone(l.Common)
	for _, f := range l.apiFiles {
		out = append(out, path.Join(APIDir, f))
	}
	return out
}

// SharedFile returns one of SharedFiles.
func (l *Lab) SharedFile(file string) ([]byte, error) {
	if l.API != nil && path.Dir(file) == APIDir && slices.Contains(l.apiFiles, path.Base(file)) {
		return fs.ReadFile(v1alpha1.Sources, path.Base(file))
	}
	return fs.ReadFile(l.root, path.Join(commonDir, file))
}

// Manifest is one CRD manifest: its file name and YAML.
type Manifest struct {
	Name string
	Data []byte
}

// CRDManifests returns the lab's CRD manifests: those declared in crds, then,
// for a lab with an API, the operator's CRD of each kind moved to the lab's
// group. Only the group and the CRD's name change (a text edit of the
// generated YAML, so it stays as controller-gen wrote it); labs.Load checks
// the result decodes and the schema is the operator's.
func (l *Lab) CRDManifests() ([]Manifest, error) {
	out := make([]Manifest, 0, len(l.CRDs))
	for _, name := range l.CRDs {
		b, err := fs.ReadFile(l.root, name)
		if err != nil {
			return nil, fmt.Errorf("lab %s: read CRD %s: %w", l.ID, name, err)
		}
		out = append(out, Manifest{path.Base(name), b})
	}
	if l.API == nil {
		return out, nil
	}
	for _, kind := range l.API.Kinds {
		file, b, err := crds.Manifest(kind)
		if err != nil {
			return nil, fmt.Errorf("lab %s: %w", l.ID, err)
		}
		moved := strings.ReplaceAll(string(b), "."+v1alpha1.GroupVersion.Group+"\n", "."+l.API.Group+"\n")
		moved = strings.ReplaceAll(moved, "group: "+v1alpha1.GroupVersion.Group+"\n", "group: "+l.API.Group+"\n")
		out = append(out, Manifest{strings.Replace(file, v1alpha1.GroupVersion.Group, l.API.Group, 1), []byte(moved)})
	}
	return out, nil
}

// Exercise finds an exercise by id or by its 1-based number.
func (l *Lab) Exercise(ref string) (*Exercise, error) {
	for _, e := range l.Exercises {
		if e.ID == ref || strconv.Itoa(e.Number) == ref {
			return e, nil
		}
	}
	ids := make([]string, len(l.Exercises))
	for i, e := range l.Exercises {
		ids[i] = fmt.Sprintf("%d %s", e.Number, e.ID)
	}
	return nil, fmt.Errorf("lab %s has no exercise %q (exercises: %s)", l.ID, ref, strings.Join(ids, ", "))
}

// ExerciseForFile returns the exercise a workspace file belongs to, or nil.
func (l *Lab) ExerciseForFile(file string) *Exercise {
	for _, e := range l.Exercises {
		if slices.Contains(e.Files, file) {
			return e
		}
	}
	return nil
}
