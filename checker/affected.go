package checker

import (
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/operator-lab/lab/labs"
)

// Affected returns the exercises among whose grade a change of the given
// files (paths relative to the workspace, with slashes, as
// workspace.Watch reports them) may alter: those whose package, or a
// package of the workspace it or its checks import (directly or not), holds
// a changed Go file. A change that is not to a Go file (go.mod, go.sum) or
// "." (anything may have changed) affects them all; the learner's own test
// files affect none, as no check compiles them.
func Affected(lab *labs.Lab, workspaceDir string, changed []string, among []*labs.Exercise) []*labs.Exercise {
	changedPkgs := map[string]bool{}
	for _, p := range changed {
		switch {
		case p == "." || !strings.HasSuffix(p, ".go"):
			return among
		case strings.HasSuffix(p, "_test.go"):
		default:
			changedPkgs[path.Dir(p)] = true
		}
	}
	if len(changedPkgs) == 0 {
		return nil
	}
	imports := func(dir string) []string {
		return localImports(lab.Module, filepath.Join(workspaceDir, filepath.FromSlash(dir)))
	}
	var out []*labs.Exercise
	for _, e := range among {
		roots := []string{e.Package}
		for _, c := range e.Checks {
			if src, err := e.CheckFile(c); err == nil {
				roots = append(roots, localImportsOf(lab.Module, src)...)
			}
		}
		if reaches(roots, imports, changedPkgs) {
			out = append(out, e)
		}
	}
	return out
}

// reaches says whether a package in targets is among roots or what they
// import, transitively.
func reaches(roots []string, imports func(dir string) []string, targets map[string]bool) bool {
	seen := map[string]bool{}
	for len(roots) > 0 {
		dir := roots[len(roots)-1]
		roots = roots[:len(roots)-1]
		if seen[dir] {
			continue
		}
		seen[dir] = true
		if targets[dir] {
			return true
		}
		roots = append(roots, imports(dir)...)
	}
	return false
}

// localImports returns the workspace folders (relative, with slashes) the
// non-test Go files in dir import from module. Files that do not parse
// count for nothing: the build reports them.
func localImports(module, dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		out = append(out, localImportsOf(module, src)...)
	}
	return out
}

// localImportsOf returns the folders of module that the Go source imports.
func localImportsOf(module string, src []byte) []string {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.ImportsOnly)
	if err != nil {
		return nil
	}
	var out []string
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		if p == module {
			out = append(out, ".")
		} else if rest, ok := strings.CutPrefix(p, module+"/"); ok {
			out = append(out, rest)
		}
	}
	return out
}
