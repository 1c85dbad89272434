package labs

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
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

//go:embed all:3.1 all:4.4
var definitions embed.FS

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
	// Common lists the files (relative to the workspace root) every workspace
	// gets from _common/ that belong to no exercise.
	Common    []string    `json:"common"`
	Exercises []*Exercise `json:"exercises"`
	// Runner is how `lab start LAB --mine` runs the learner's own controller.
	Runner *Runner `json:"runner"`

	root fs.FS // the lab folder
}

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

// CommonFile returns one of the files every workspace of the lab gets.
func (l *Lab) CommonFile(file string) ([]byte, error) {
	return fs.ReadFile(l.root, path.Join(commonDir, file))
}

// CRDManifests returns the lab's CRD manifests (YAML), in declaration order.
func (l *Lab) CRDManifests() ([][]byte, error) {
	out := make([][]byte, 0, len(l.CRDs))
	for _, name := range l.CRDs {
		b, err := fs.ReadFile(l.root, name)
		if err != nil {
			return nil, fmt.Errorf("lab %s: read CRD %s: %w", l.ID, name, err)
		}
		out = append(out, b)
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

// All loads every embedded lab, ordered by id.
func All() ([]*Lab, error) {
	entries, err := fs.ReadDir(definitions, ".")
	if err != nil {
		return nil, fmt.Errorf("read embedded labs: %w", err)
	}
	var all []*Lab
	for _, entry := range entries {
		if !entry.IsDir() {
			continue
		}
		sub, err := fs.Sub(definitions, entry.Name())
		if err != nil {
			return nil, fmt.Errorf("open embedded lab %s: %w", entry.Name(), err)
		}
		lab, err := Load(sub)
		if err != nil {
			return nil, err
		}
		all = append(all, lab)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	return all, nil
}

// Get returns the embedded lab with the given id.
func Get(id string) (*Lab, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(all))
	for i, l := range all {
		if l.ID == id {
			return l, nil
		}
		ids[i] = l.ID
	}
	return nil, fmt.Errorf("no lab %q (labs: %s)", id, strings.Join(ids, ", "))
}

// ByModule returns the embedded lab whose workspace module path is module,
// or nil when no lab's is.
func ByModule(module string) (*Lab, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	for _, l := range all {
		if l.Module == module {
			return l, nil
		}
	}
	return nil, nil
}

// Load parses and validates the lab definition in root (a lab folder).
func Load(root fs.FS) (*Lab, error) {
	raw, err := fs.ReadFile(root, "lab.yaml")
	if err != nil {
		return nil, fmt.Errorf("read lab.yaml: %w", err)
	}
	var lab Lab
	if err := yaml.UnmarshalStrict(raw, &lab); err != nil {
		return nil, fmt.Errorf("parse lab.yaml: %w", err)
	}
	lab.root = root
	for i, e := range lab.Exercises {
		if e == nil {
			return nil, fmt.Errorf("lab.yaml: exercise %d is empty", i+1)
		}
		e.Number = i + 1
		e.lab = &lab
	}
	if err := lab.validate(); err != nil {
		return nil, fmt.Errorf("lab %q: %w", lab.ID, err)
	}
	return &lab, nil
}

// validate checks everything a learner or the checker would otherwise trip
// over later: versions, ids, both languages, and that every declared file
// exists and every file in the folder is declared.
func (l *Lab) validate() error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if l.SchemaVersion != SchemaVersion {
		fail("schemaVersion is %d, this lab build reads %d", l.SchemaVersion, SchemaVersion)
	}
	if l.ID == "" || l.Module == "" {
		fail("id and module are required")
	}
	l.checkText("title", l.Title, fail)
	if len(l.Exercises) == 0 {
		fail("no exercises")
	}
	for _, crd := range l.CRDs {
		if _, err := fs.Stat(l.root, crd); err != nil {
			fail("crd %s: %v", crd, err)
		}
	}

	declared := map[string]string{} // path in the lab folder → who declared it
	declare := func(p, by string) {
		if prev, dup := declared[p]; dup {
			fail("%s is declared twice (%s and %s)", p, prev, by)
		}
		declared[p] = by
		if _, err := fs.Stat(l.root, p); err != nil {
			fail("%s declares %s, which is missing", by, p)
		}
	}
	declare("lab.yaml", "the loader")
	for _, crd := range l.CRDs {
		declared[crd] = "crds"
	}
	for _, f := range l.Common {
		declare(path.Join(commonDir, f), "common")
	}

	seen := map[string]bool{}
	for _, e := range l.Exercises {
		who := "exercise " + e.ID
		switch {
		case e.ID == "":
			fail("exercise %d has no id", e.Number)
		case seen[e.ID]:
			fail("exercise id %q is used twice", e.ID)
		case strings.ContainsAny(e.ID, " /\\") || e.ID == strconv.Itoa(e.Number) || isNumber(e.ID):
			fail("exercise id %q must be a word (numbers address exercises by position)", e.ID)
		}
		seen[e.ID] = true
		l.checkText(who+" title", e.Title, fail)
		if e.Package == "" || path.Clean(e.Package) != e.Package || strings.HasPrefix(e.Package, "..") {
			fail("%s: package %q must be a clean relative folder", who, e.Package)
		}
		if e.Timeout.Duration <= 0 {
			fail("%s: timeout is required", who)
		}
		if len(e.Files) == 0 || len(e.Checks) == 0 {
			fail("%s: needs files and checks", who)
		}
		for _, f := range e.Files {
			if path.Dir(f) != e.Package {
				fail("%s: file %s is outside its package %s", who, f, e.Package)
			}
			if strings.HasSuffix(f, "_test.go") {
				fail("%s: learner file %s must not be a test file (the checker ignores them)", who, f)
			}
			declare(path.Join(starterDir, f), who)
			declare(path.Join(solutionDir, f), who)
			if b, err := e.Starter(f); err == nil && !strings.Contains(string(b), TODOMarker) {
				fail("%s: starter %s has no %s marker", who, f, TODOMarker)
			}
		}
		for _, c := range e.Checks {
			if path.Dir(c) != e.Package || !strings.HasSuffix(c, "_test.go") {
				fail("%s: check %s must be a _test.go file in %s", who, c, e.Package)
			}
			declare(path.Join(checksDir, c), who)
		}
		for _, lang := range Languages {
			if len(e.Hints[lang]) < 2 {
				fail("%s: needs at least 2 hints in %s", who, lang)
			}
			declare(path.Join(instructionsDir, lang, e.ID+".md"), who)
		}
	}

	if r := l.Runner; r != nil {
		if _, err := l.Exercise(r.Exercise); err != nil {
			fail("runner: %v", err)
		}
		if path.Dir(r.Program) != runnerDir || path.Ext(r.Program) != ".go" {
			fail("runner: program %s must be a .go file in %s/", r.Program, runnerDir)
		}
		declare(r.Program, "runner")
		if r.Sample.Kind == "" || r.Sample.Name == "" || len(r.Sample.Spec) == 0 || r.Sample.Update == "" {
			fail("runner: sample needs kind, name, spec and update")
		}
		if field, ok := strings.CutPrefix(r.Sample.Update, "spec."); !ok || r.Sample.Spec[field] == nil {
			fail("runner: sample update %q must name a field of its spec (spec.<field>)", r.Sample.Update)
		}
	}

	// Every file in the folder must be declared, so nothing ships by accident
	// and nothing declared is silently ignored.
	walkErr := fs.WalkDir(l.root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			if _, ok := declared[p]; !ok {
				fail("%s is not declared in lab.yaml", p)
			}
		}
		return nil
	})
	if walkErr != nil {
		fail("walk lab folder: %v", walkErr)
	}
	return errors.Join(errs...)
}

func (l *Lab) checkText(what string, t Text, fail func(string, ...any)) {
	for _, lang := range Languages {
		if strings.TrimSpace(t[lang]) == "" {
			fail("%s has no %s text", what, lang)
		}
	}
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}
