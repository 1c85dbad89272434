package checker

import (
	"context"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"

	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/checkkit"
	"github.com/operator-lab/lab/labs/checkkit/cluster"
	"github.com/operator-lab/lab/labs/runkit"
	"github.com/operator-lab/lab/labs/workspace"
	"github.com/operator-lab/lab/observe"
)

// supportModule is the module the hidden checks and the runner program
// import their helpers from. In the private build it is replaced by a
// folder holding just the packages they need, so the workspace never
// depends on lab's real module.
const supportModule = "github.com/operator-lab/lab"

// supportDir is that folder, inside the build directory. The underscore
// keeps `./...` in the build directory from matching it.
const supportDir = "_lab"

// supportPackages lists what goes into the support module: folder in the
// module → the package's sources.
func supportPackages() (map[string]fs.FS, error) {
	// The observation layer both wrap the learner's code with, the checks'
	// toolkit, and the runner's (labs/runkit, for `lab start --mine`).
	return map[string]fs.FS{
		"observe":               observe.Sources,
		"labs/checkkit":         checkkit.Sources,
		"labs/checkkit/cluster": cluster.Sources,
		"labs/runkit":           runkit.Sources,
	}, nil
}

// File is a file lab adds to a private build.
type File struct {
	// Path is relative to the build folder, with slashes.
	Path string
	Read func() ([]byte, error)
}

// checkFiles are the hidden checks of the given exercises, and with them
// lab's TestMain for each check package (recordMainFile).
func checkFiles(exercises []*labs.Exercise) []File {
	var out []File
	for _, e := range exercises {
		for _, c := range e.Checks {
			out = append(out, File{c, func() ([]byte, error) { return checkSource(e, c) }})
		}
		if len(e.Checks) == 0 {
			continue
		}
		first := e.Checks[0]
		out = append(out, File{path.Join(path.Dir(first), recordMainFile), func() ([]byte, error) {
			b, err := checkSource(e, first)
			if err != nil {
				return nil, err
			}
			f, err := parser.ParseFile(token.NewFileSet(), first, b, parser.PackageClauseOnly)
			if err != nil {
				return nil, fmt.Errorf("exercise %s: check %s: %w", e.ID, first, err)
			}
			return fmt.Appendf(nil, recordMainSource, f.Name.Name), nil
		}})
	}
	return out
}

// recordMainFile is lab's TestMain in each check package: it makes the
// test binary write its checkkit.Record, without which no pass counts.
const (
	recordMainFile   = "zz_lab_main_test.go"
	recordMainSource = `// Code lab adds to the checks: the record of what they did.
package %s

import (
	"os"
	"testing"

	"github.com/operator-lab/lab/labs/checkkit"
)

func TestMain(m *testing.M) { os.Exit(checkkit.Main(m)) }
`
)

func checkSource(e *labs.Exercise, file string) ([]byte, error) {
	b, err := e.CheckFile(file)
	if err != nil {
		return nil, fmt.Errorf("exercise %s: read check %s: %w", e.ID, file, err)
	}
	return b, nil
}

// Build is a private build of a workspace (NewBuild): a copy of the
// learner's files and what lab adds, in a folder of its own, held until
// Close.
type Build struct {
	// Dir is the private copy; the next build of the same purpose empties it.
	Dir string
	// BinDir keeps the build's binaries between builds, so that go relinks
	// only what is out of date.
	BinDir string

	paths  pathMapper
	unlock func()
}

// NewBuild makes the private build of workspaceDir for purpose. It locks
// the purpose's build folder, first calling waiting (if set) once when
// another build holds it and waiting until it is free or ctx ends; then it
// empties the folder and fills it (prepare): the learner's files without
// their tests, the added files, the support module, and a go.mod pointing
// at it. The workspace is only read.
func NewBuild(ctx context.Context, lab *labs.Lab, workspaceDir string, purpose Purpose, added []File, waiting func()) (*Build, error) {
	dir, binDir, unlock, err := lockBuildDirWaiting(ctx, workspaceDir, purpose, waiting)
	if err != nil {
		return nil, err
	}
	if err := prepare(lab, workspaceDir, dir, added); err != nil {
		// Half a copy is of no use: the next build empties the folder anyway.
		_ = os.RemoveAll(dir)
		unlock()
		return nil, err
	}
	return &Build{Dir: dir, BinDir: binDir, paths: pathMapper{buildDir: dir, module: lab.Module}, unlock: unlock}, nil
}

// Close lets the next build of the workspace for the same purpose have
// the folder. The copy stays until then.
func (b *Build) Close() { b.unlock() }

// LearnerPositions rewrites positions in the build folder, in what go
// printed, into the learner's own ("results/reconciler.go:41"), and marks
// those in hidden check files "(check)".
func (b *Build) LearnerPositions(out string) string { return b.paths.mapText(out) }

// prepare builds the private copy of the workspace in buildDir: the
// learner's files without any test files, the added files (hidden checks,
// a runner program), the support module, and a go.mod that points at it.
// A go.mod that is missing or declares another module than the lab's is an
// error.
func prepare(lab *labs.Lab, workspaceDir, buildDir string, added []File) error {
	if err := copyWorkspace(workspaceDir, buildDir); err != nil {
		return err
	}
	if err := writeFiles(buildDir, added); err != nil {
		return err
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
	mod, support, err := privateGoMods(lab, gomod)
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(buildDir, supportDir, "go.mod"), support); err != nil {
		return err
	}
	return writeFile(filepath.Join(buildDir, "go.mod"), mod)
}

// privateGoMods returns the private build's go.mod, the workspace's gomod
// requiring the support module and replacing it by its folder, and the
// support module's own go.mod. A go.mod that declares another module than
// the lab's is an error.
func privateGoMods(lab *labs.Lab, gomod []byte) (mod, support []byte, err error) {
	// Versions are left as written: the go command resolves or rejects
	// them, and says so in the learner's terms.
	f, err := modfile.Parse("go.mod", gomod, func(_, version string) (string, error) { return version, nil })
	if err != nil {
		return nil, nil, fmt.Errorf("the workspace's go.mod cannot be read: %w", err)
	}
	if module := modulePath(f); module != lab.Module {
		return nil, nil, fmt.Errorf("go.mod's module must be %s, the path the lab's packages import each other by (it is %q): change its module line back", lab.Module, module)
	}
	if support, err = supportGoMod(goVersion(f)); err != nil {
		return nil, nil, err
	}
	if err := f.AddRequire(supportModule, supportVersion); err != nil {
		return nil, nil, fmt.Errorf("go.mod: %w", err)
	}
	if err := f.AddReplace(supportModule, "", "./"+supportDir, ""); err != nil {
		return nil, nil, fmt.Errorf("go.mod: %w", err)
	}
	// For whoever opens a kept build folder: these lines are lab's.
	note := modfile.Comment{Token: "// Added by lab (private build only)."}
	for _, r := range f.Require {
		if r.Mod.Path == supportModule {
			r.Syntax.Before = append(r.Syntax.Before, note)
		}
	}
	for _, r := range f.Replace {
		if r.Old.Path == supportModule {
			r.Syntax.Before = append(r.Syntax.Before, note)
		}
	}
	if mod, err = f.Format(); err != nil {
		return nil, nil, fmt.Errorf("go.mod: %w", err)
	}
	return mod, support, nil
}

// supportVersion is the version go.mod requires the support module at; the
// replacement by the folder makes any version do.
const supportVersion = "v0.0.0-00010101000000-000000000000"

// supportGoMod is the support module's go.mod, with the workspace's go line.
func supportGoMod(goVersion string) ([]byte, error) {
	f := new(modfile.File)
	if err := f.AddModuleStmt(supportModule); err != nil {
		return nil, fmt.Errorf("support go.mod: %w", err)
	}
	if err := f.AddGoStmt(goVersion); err != nil {
		return nil, fmt.Errorf("support go.mod: %w", err)
	}
	return f.Format()
}

func modulePath(f *modfile.File) string {
	if f.Module == nil {
		return ""
	}
	return f.Module.Mod.Path
}

// goVersion is go.mod's go line, or the oldest version lab's packages build with.
func goVersion(f *modfile.File) string {
	if f.Go == nil {
		return "1.26.0"
	}
	return f.Go.Version
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

// writeFiles writes files (paths relative to dir) into dir.
func writeFiles(dir string, files []File) error {
	for _, f := range files {
		b, err := f.Read()
		if err != nil {
			return err
		}
		if err := writeFile(filepath.Join(dir, filepath.FromSlash(f.Path)), b); err != nil {
			return err
		}
	}
	return nil
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
