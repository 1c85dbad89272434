// Package workspace creates and maintains a learner's lab workspace: a
// standalone Go module with the starter files of one lab, pinned to exactly
// the module versions lab itself is built with (so it builds from the local
// module cache, offline), and a small progress file under .lab/. It also
// finds the workspace a command is about (Resolve, OpenOrCreate) and follows
// its changes (Watch: the sources for `lab check --watch`, the progress file
// for the live view).
//
// Nothing here ever overwrites a learner's file without keeping a backup.
package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"

	"github.com/operator-lab/lab/internal/l10n"
	"github.com/operator-lab/lab/labs"
)

// StateDir is the workspace folder lab keeps its own files in.
const StateDir = ".lab"

// DefaultDir is the workspace folder `lab init LAB` creates in the current directory.
func DefaultDir(labID string) string { return "lab-" + labID }

// Created reports what Create wrote and what it left alone.
type Created struct {
	Dir     string
	Written []string
	// Kept are files that already existed and were not touched.
	Kept []string
}

// Create makes the workspace for lab in dir: go.mod and go.sum, the common
// and starter files, the CRD manifests under config/crd, a README with the
// exercises in lang, and the progress file. Existing files are never
// overwritten; a second Create only fills in what is missing. A folder that
// is neither empty nor a lab workspace is refused.
func Create(lab *labs.Lab, dir, lang string) (*Created, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace folder %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("create workspace folder: %w", err)
	}
	switch other, err := Detect(abs); {
	case err == nil && other != lab.ID:
		return nil, fmt.Errorf("%s is already a workspace of lab %s; choose another folder with --dir", dir, other)
	case err != nil:
		// Not a workspace: only an empty folder becomes one, so lab never
		// spreads its files into someone else's project.
		entries, err := os.ReadDir(abs)
		if err != nil {
			return nil, fmt.Errorf("workspace folder %s: %w", dir, err)
		}
		if len(entries) > 0 {
			return nil, fmt.Errorf("%s is not empty and not a lab workspace, so lab leaves it alone: pick an empty or new folder with --dir", dir)
		}
	}

	files, err := initialFiles(lab, lang)
	if err != nil {
		return nil, err
	}
	out, err := AddMissing(abs, files)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(ProgressPath(abs)); errors.Is(err, fs.ErrNotExist) {
		if err := SaveProgress(abs, NewProgress(lab.ID)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// NewFile is a file lab adds to a workspace; Path is relative, with
// slashes.
type NewFile struct {
	Path    string
	Content func() ([]byte, error)
}

// AddMissing writes those of files that the workspace at dir does not
// have yet, and leaves the others as they are.
func AddMissing(dir string, files []NewFile) (*Created, error) {
	out := &Created{Dir: dir}
	for _, f := range files {
		target := filepath.Join(dir, filepath.FromSlash(f.Path))
		if _, err := os.Lstat(target); err == nil {
			out.Kept = append(out.Kept, f.Path)
			continue
		}
		content, err := f.Content()
		if err != nil {
			return nil, err
		}
		if err := writeFileAtomic(target, content, 0o644); err != nil {
			return nil, err
		}
		out.Written = append(out.Written, f.Path)
	}
	return out, nil
}

// initialFiles lists every file a fresh workspace holds, in writing order.
func initialFiles(lab *labs.Lab, lang string) ([]NewFile, error) {
	mod, err := Pinned(lab.Module)
	if err != nil {
		return nil, err
	}
	files := []NewFile{
		{"go.mod", func() ([]byte, error) { return mod.GoMod, nil }},
		{"go.sum", func() ([]byte, error) { return mod.GoSum, nil }},
		{"README.md", func() ([]byte, error) { return []byte(Readme(lab, lang)), nil }},
		{".gitignore", func() ([]byte, error) { return []byte(gitignore), nil }},
	}
	for _, f := range lab.SharedFiles() {
		files = append(files, NewFile{f, func() ([]byte, error) { return lab.SharedFile(f) }})
	}
	manifests, err := lab.CRDManifests()
	if err != nil {
		return nil, err
	}
	for _, m := range manifests {
		files = append(files, NewFile{path.Join("config/crd", m.Name), func() ([]byte, error) { return m.Data, nil }})
	}
	for _, e := range lab.Exercises {
		for _, f := range e.Files {
			files = append(files, NewFile{f, func() ([]byte, error) { return e.Starter(f) }})
		}
	}
	return files, nil
}

// gitignore is the workspace's .gitignore: the workspace is the learner's
// to push as it is, but for lab's state and the reports a check may write.
const gitignore = `# This workspace is yours to push as it is (git init, git add ., git commit,
# git push): lab check grades a fresh clone of it the same way.
# lab's own state on this machine (grades, hints shown): not part of the work.
` + StateDir + `/
# Reports lab check writes with --results, --junit or in a classroom's CI.
results.json
junit.xml
`

// Readme is the workspace's README: every exercise's instructions in lang,
// and how to hand the work in.
func Readme(lab *labs.Lab, lang string) string {
	say := l10n.For(lang)
	var b strings.Builder
	fmt.Fprintf(&b, "# lab %s — %s\n\n", lab.ID, lab.Title.In(lang))
	b.WriteString(say.Text("Check your work with `lab check`; stuck? `lab hint`; progress: `lab list`.") + "\n\n")
	for _, e := range lab.Exercises {
		b.WriteString(strings.TrimSpace(e.Instructions(lang)))
		b.WriteString("\n\n")
	}
	b.WriteString(say.Text(
		"## Handing in your work\n" +
			"\n" +
			"The workspace is a Git repository's worth of files, ready to push as it is:\n" +
			"\n" +
			"    git init && git add . && git commit -m \"my work\"\n" +
			"    git remote add origin <your repository's URL> && git push -u origin HEAD\n" +
			"\n" +
			".gitignore leaves out lab's own state (.lab/) and report files. In a class\n" +
			"that grades with GitHub Classroom, `lab classroom init` adds the workflow\n" +
			"that grades every push (.github/workflows/classroom.yml) and classroom.yaml,\n" +
			"what each exercise is worth; push them too. Every push is then graded by the\n" +
			"same checks as `lab check`.\n"))
	return b.String()
}

// Detect returns the id of the lab whose workspace dir is. go.mod's module
// path decides; only when go.mod names no lab's module (it is missing, or
// the learner changed it) does the progress file tell.
func Detect(dir string) (string, error) {
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		return "", fmt.Errorf("%s is not a lab workspace: %w", dir, err)
	case !st.IsDir():
		return "", fmt.Errorf("%s is not a lab workspace: it is a file, not a folder", dir)
	}
	lab, modErr := labOfGoMod(dir)
	if lab != nil {
		return lab.ID, nil
	}
	p, err := LoadProgress(dir)
	switch {
	case err == nil:
		return p.Lab, nil
	case !errors.Is(err, ErrNoProgress):
		return "", fmt.Errorf("%s is not a lab workspace: go.mod does not name a lab's module, and %w", dir, err)
	case errors.Is(modErr, fs.ErrNotExist):
		return "", fmt.Errorf("%s is not a lab workspace (no %s and no go.mod)", dir, ProgressPath(dir))
	case modErr != nil:
		return "", modErr
	default:
		return "", fmt.Errorf("%s is not a lab workspace (its go.mod is not a lab's module)", dir)
	}
}

// Enclosing returns the nearest folder, from dir up, that is a lab
// workspace: one that holds lab's state folder, or a go.mod whose module is
// a lab's (a fresh clone has no state folder: the workspace's .gitignore
// leaves it out). It returns "" when there is none.
func Enclosing(dir string) string {
	for {
		if st, err := os.Stat(filepath.Join(dir, StateDir)); err == nil && st.IsDir() {
			return dir
		}
		if lab, _ := labOfGoMod(dir); lab != nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// labOfGoMod returns the lab whose module dir's go.mod declares: nil (and
// no error) when go.mod declares another module; an error wrapping
// fs.ErrNotExist when there is no go.mod.
func labOfGoMod(dir string) (*labs.Lab, error) {
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return nil, fmt.Errorf("read go.mod: %w", err)
	}
	return labs.ByModule(modfile.ModulePath(mod))
}

// BackupDir returns a fresh folder under .lab/backups for one operation.
func BackupDir(dir, operation string) string {
	return filepath.Join(dir, StateDir, "backups", time.Now().Format("20060102-150405.000")+"-"+operation)
}

// Replace writes content to the workspace file rel, first copying the
// current file (if any, and if different) into backupDir. It returns the
// backup's path, or "" when nothing needed backing up.
func Replace(dir, rel string, content []byte, backupDir string) (string, error) {
	target := filepath.Join(dir, filepath.FromSlash(rel))
	old, err := os.ReadFile(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", writeFileAtomic(target, content, 0o644)
	case err != nil:
		return "", fmt.Errorf("read %s: %w", rel, err)
	case bytes.Equal(old, content):
		return "", nil
	}
	backup := filepath.Join(backupDir, filepath.FromSlash(rel))
	if err := writeFileAtomic(backup, old, 0o644); err != nil {
		return "", fmt.Errorf("back up %s: %w", rel, err)
	}
	if err := writeFileAtomic(target, content, 0o644); err != nil {
		return "", err
	}
	return backup, nil
}

// writeFileAtomic writes through a temporary file and a rename, so an
// interrupted write never leaves half a file.
func writeFileAtomic(name string, content []byte, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return fmt.Errorf("create folder for %s: %w", name, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := os.Chmod(tmp.Name(), perm); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// BackgroundBuildEnv, set to "off", stops `lab init` and `lab start` from
// building a workspace's checks in the background (lab's own tests set
// it, so that only the tests of that build start one).
const BackgroundBuildEnv = "LAB_BACKGROUND_BUILD"
