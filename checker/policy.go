package checker

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/workspace"
)

// The learner's code runs inside the checks' test process, with its rights.
// The policy keeps out of it what no exercise needs and what would let code
// decide its own grade or reach past the check: ending or replacing the
// process, starting others, signals, writing files or the environment,
// going below Go's type safety, and the testing package or lab's own
// toolkit. It reads the source (no type checking): a name is judged by the
// package its file imports it from.

// forbiddenImports are import paths (or, ending in "/", path prefixes)
// learner code may not import, with why.
var forbiddenImports = map[string]string{
	"os/exec":                       "it starts other processes",
	"os/signal":                     "it takes signals meant for the check",
	"syscall":                       "it reaches the operating system directly",
	"golang.org/x/sys/":             "it reaches the operating system directly",
	"unsafe":                        "it goes below Go's type safety",
	"plugin":                        "it loads code the check never saw",
	"C":                             "cgo runs code the check never saw",
	"testing":                       "the checks are lab's tests, not the exercise's",
	"testing/":                      "the checks are lab's tests, not the exercise's",
	"io/ioutil":                     "it writes files (read with os.ReadFile)",
	"github.com/operator-lab/lab/":  "it is lab's own toolkit, there for the checks",
	"github.com/operator-lab/lab":   "it is lab's own toolkit, there for the checks",
	"k8s.io/client-go/util/testing": "the checks are lab's tests, not the exercise's",
}

// forbiddenNames are package members learner code may not use: import
// path → name → why.
var forbiddenNames = map[string]map[string]string{
	"os": names("it ends the check's process early", "Exit").
		add("it reads the check's command line", "Args").
		add("it starts other processes", "StartProcess", "FindProcess").
		add("it opens the check's own file descriptors", "NewFile").
		add("it writes files", "Create", "CreateTemp", "OpenFile", "WriteFile", "Mkdir", "MkdirAll", "MkdirTemp",
			"Remove", "RemoveAll", "Rename", "Chmod", "Chown", "Lchown", "Chtimes", "Symlink", "Link", "Truncate", "CopyFS").
		add("it changes the check's environment", "Setenv", "Unsetenv", "Clearenv", "Chdir"),
	"log":               names("it ends the check's process early", "Fatal", "Fatalf", "Fatalln"),
	"k8s.io/klog/v2":    names("it ends the check's process early", "Fatal", "Fatalf", "Fatalln", "FatalS", "Exit", "Exitf", "Exitln"),
	"k8s.io/klog":       names("it ends the check's process early", "Fatal", "Fatalf", "Fatalln", "Exit", "Exitf", "Exitln"),
	"runtime":           names("it ends the check's goroutine early", "Goexit"),
	"runtime/debug":     names("it changes how the check's process crashes", "SetTraceback", "SetPanicOnFault", "SetCrashOutput"),
	"k8s.io/utils/exec": names("it starts other processes", "New"),
}

type nameSet map[string]string

func names(why string, members ...string) nameSet { return nameSet{}.add(why, members...) }

func (s nameSet) add(why string, members ...string) nameSet {
	for _, m := range members {
		s[m] = why
	}
	return s
}

// violation is one use the policy forbids.
type violation struct {
	pos  string // file:line, relative to the workspace
	what string // "os.Exit", `import "os/exec"`
	why  string
}

func (v violation) String() string { return fmt.Sprintf("%s: %s (%s)", v.pos, v.what, v.why) }

// vetWorkspace applies the policy to the learner's Go files in dir (not
// the test files, which no check runs, nor the files lab provides), and
// returns the violations by package folder (slash-separated, relative).
func vetWorkspace(lab *labs.Lab, dir string) (map[string][]violation, error) {
	labOwned := lab.SharedFiles()
	out := map[string][]violation{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (d.Name() == workspace.StateDir || strings.HasPrefix(d.Name(), ".") || d.Name() == supportDir) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || slices.Contains(labOwned, rel) {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil // the build says what is wrong with it, in the learner's terms
		}
		if vs := vetFile(fset, rel, f); len(vs) > 0 {
			pkg := path.Dir(rel)
			out[pkg] = append(out[pkg], vs...)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the workspace's Go files: %w", err)
	}
	return out, nil
}

func vetFile(fset *token.FileSet, rel string, f *ast.File) []violation {
	var out []violation
	at := func(pos token.Pos) string { return fmt.Sprintf("%s:%d", rel, fset.Position(pos).Line) }
	local := map[string]string{} // the name a file uses for an import → its path
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		if why, ok := forbiddenImport(p); ok {
			out = append(out, violation{at(imp.Pos()), fmt.Sprintf("import %q", p), why})
			continue
		}
		name := path.Base(p)
		if strings.HasPrefix(name, "v") && strings.Contains(p, "/") {
			if _, err := strconv.Atoi(name[1:]); err == nil { // k8s.io/klog/v2 is klog
				name = path.Base(path.Dir(p))
			}
		}
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if name == "." && forbiddenNames[p] != nil {
			out = append(out, violation{at(imp.Pos()), fmt.Sprintf("import . %q", p), "its names must be read as " + path.Base(p) + ".Name to be checked"})
			continue
		}
		local[name] = p
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		if why, ok := forbiddenNames[local[x.Name]][sel.Sel.Name]; ok {
			out = append(out, violation{at(sel.Pos()), x.Name + "." + sel.Sel.Name, why})
		}
		return true
	})
	for _, group := range f.Comments {
		for _, c := range group.List {
			if strings.HasPrefix(c.Text, "//go:linkname") {
				out = append(out, violation{at(c.Pos()), "//go:linkname", "it reaches into other packages' internals"})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].pos < out[j].pos })
	return out
}

func forbiddenImport(p string) (string, bool) {
	if why, ok := forbiddenImports[p]; ok {
		return why, true
	}
	for prefix, why := range forbiddenImports {
		if strings.HasSuffix(prefix, "/") && strings.HasPrefix(p, prefix) {
			return why, true
		}
	}
	return "", false
}

// PolicyError says the learner's code uses what the policy keeps out, so
// lab does not run it.
type PolicyError struct{ violations []violation }

func (e *PolicyError) Error() string {
	return "lab does not run this code: " + firstViolations(e.violations)
}

// Details lists every violation, a line each.
func (e *PolicyError) Details() string { return violationLines(e.violations) }

// Vet applies the policy to every Go file of the learner's in the
// workspace: the runner of `lab start --mine` takes the learner's code from
// all the lab's packages, so a violation anywhere keeps it from running.
func Vet(lab *labs.Lab, dir string) error {
	byPackage, err := vetWorkspace(lab, dir)
	if err != nil {
		return err
	}
	var all []violation
	for _, pkg := range slices.Sorted(maps.Keys(byPackage)) {
		all = append(all, byPackage[pkg]...)
	}
	if len(all) == 0 {
		return nil
	}
	return &PolicyError{violations: all}
}

// firstViolations names the first violation and how many more there are.
func firstViolations(vs []violation) string {
	text := vs[0].String()
	if len(vs) > 1 {
		text += fmt.Sprintf(" and %d more", len(vs)-1)
	}
	return text
}

func violationLines(vs []violation) string {
	lines := make([]string, len(vs))
	for i, v := range vs {
		lines[i] = v.String()
	}
	return "No exercise needs these, and lab cannot trust code that uses them:\n" + strings.Join(lines, "\n")
}

// policyResult is the grade of an exercise whose code the policy rejects:
// an error naming the first use, and how many more there are.
func policyResult(e *labs.Exercise, vs []violation) *Result {
	err := &PolicyError{violations: vs}
	return &Result{Exercise: e, Status: StatusError, Reason: err.Error(), Output: err.Details()}
}

// admitted applies the policy to the workspace and splits the exercises
// to check: those it lets run, and the grades of those it does not. An
// exercise is refused for violations in its own package and in packages of
// the learner's that are no exercise's (any exercise may import them).
func admitted(lab *labs.Lab, dir string, exercises []*labs.Exercise) (toRun []*labs.Exercise, refused []*Result, err error) {
	byPackage, err := vetWorkspace(lab, dir)
	if err != nil {
		return nil, nil, err
	}
	own := map[string]bool{}
	for _, e := range lab.Exercises {
		own[e.Package] = true
	}
	var shared []violation
	for _, pkg := range slices.Sorted(maps.Keys(byPackage)) {
		if !own[pkg] {
			shared = append(shared, byPackage[pkg]...)
		}
	}
	for _, e := range exercises {
		if vs := append(slices.Clone(byPackage[e.Package]), shared...); len(vs) > 0 {
			refused = append(refused, policyResult(e, vs))
		} else {
			toRun = append(toRun, e)
		}
	}
	return toRun, refused, nil
}
