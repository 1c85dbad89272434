package checker

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/checkkit"
	"github.com/operator-lab/lab/labs/checkkit/cluster"
	"github.com/operator-lab/lab/labs/runkit"
	"github.com/operator-lab/lab/labs/workspace"
	"github.com/operator-lab/lab/observe"
)

// supportModule is the module the hidden checks import their helpers from.
// In the private build it is replaced by a folder holding just the packages
// the checks need, so the workspace never depends on lab's real module.
const supportModule = "github.com/operator-lab/lab"

// supportDir is that folder, inside the build directory. The underscore
// keeps `./...` in the build directory from matching it.
const supportDir = "_lab"

// supportPackages lists what goes into the support module: folder in the
// module → the package's sources.
func supportPackages() (map[string]fs.FS, error) {
	// The observation layer the hidden checks wrap the learner's code with.
	return map[string]fs.FS{
		"observe":               observe.Sources,
		"labs/checkkit":         checkkit.Sources,
		"labs/checkkit/cluster": cluster.Sources,
		"labs/runkit":           runkit.Sources,
	}, nil
}

// addedFile is a file lab adds to the private build: path relative to the
// build folder, and how to read it.
type addedFile struct {
	path string
	read func() ([]byte, error)
}

// checkFiles are the hidden checks of the given exercises.
func checkFiles(exercises []*labs.Exercise) []addedFile {
	var out []addedFile
	for _, e := range exercises {
		for _, c := range e.Checks {
			out = append(out, addedFile{c, func() ([]byte, error) {
				b, err := e.CheckFile(c)
				if err != nil {
					return nil, fmt.Errorf("exercise %s: read check %s: %w", e.ID, c, err)
				}
				return b, nil
			}})
		}
	}
	return out
}

// prepare builds the private copy of the workspace in buildDir: the
// learner's files without any test files, the added files (hidden checks,
// a runner program), the support module, and a go.mod that points at it.
// A go.mod that is missing or declares another module than the lab's is an
// error.
func prepare(lab *labs.Lab, workspaceDir, buildDir string, added []addedFile) error {
	if err := copyWorkspace(workspaceDir, buildDir); err != nil {
		return err
	}
	for _, f := range added {
		b, err := f.read()
		if err != nil {
			return err
		}
		if err := writeFile(filepath.Join(buildDir, filepath.FromSlash(f.path)), b); err != nil {
			return err
		}
	}
	pkgs, err := supportPackages()
	if err != nil {
		return err
	}
	for dir, src := range pkgs {
		if err := copyGoSources(src, filepath.Join(buildDir, supportDir, filepath.FromSlash(dir))); err != nil {
			return fmt.Errorf("support package %s: %w", dir, err)
		}
	}
	gomod, err := os.ReadFile(filepath.Join(buildDir, "go.mod"))
	if err != nil {
		return fmt.Errorf("the workspace has no go.mod (recreate it with `lab init %s`, which keeps your files): %w", lab.ID, err)
	}
	if module := workspace.ModulePath(gomod); module != lab.Module {
		return fmt.Errorf("go.mod's module must be %s, the path the lab's packages import each other by (it is %q): change its module line back", lab.Module, module)
	}
	goLine := goDirectiveOf(gomod)
	if err := writeFile(filepath.Join(buildDir, supportDir, "go.mod"),
		fmt.Appendf(nil, "module %s\n\ngo %s\n", supportModule, goLine)); err != nil {
		return err
	}
	gomod = fmt.Appendf(bytes.TrimRight(gomod, "\n"),
		"\n\n// Added by lab check (private build only).\nrequire %s v0.0.0-00010101000000-000000000000\n\nreplace %s => ./%s\n",
		supportModule, supportModule, supportDir)
	return writeFile(filepath.Join(buildDir, "go.mod"), gomod)
}

// copyWorkspace copies the learner's regular files into buildDir, skipping
// lab's state folder, hidden folders and every test file: grading tests
// come only from the lab definition, so nothing the learner writes, deletes
// or edits among test files changes a grade.
func copyWorkspace(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("read workspace: %w", err)
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if rel != "." && (name == workspace.StateDir || strings.HasPrefix(name, ".") || name == supportDir) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("read workspace file %s: %w", rel, err)
		}
		return writeFile(filepath.Join(dst, rel), b)
	})
}

// copyGoSources copies the non-test Go files at the top of src into dst.
func copyGoSources(src fs.FS, dst string) error {
	entries, err := fs.ReadDir(src, ".")
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || path.Ext(name) != ".go" || strings.HasSuffix(name, "_test.go") {
			continue
		}
		b, err := fs.ReadFile(src, name)
		if err != nil {
			return err
		}
		if err := writeFile(filepath.Join(dst, name), b); err != nil {
			return err
		}
	}
	return nil
}

func goDirectiveOf(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "go "); ok {
			return strings.TrimSpace(v)
		}
	}
	return "1.26.0"
}

func writeFile(name string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return fmt.Errorf("create build folder: %w", err)
	}
	if err := os.WriteFile(name, b, 0o644); err != nil {
		return fmt.Errorf("write build file: %w", err)
	}
	return nil
}
