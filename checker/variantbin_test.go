package checker

// This file is the grader's own test harness, compiled only into the
// checker's tests: it links many learner variants of an exercise into one
// test binary, so that TestVariants grades each variant without linking a
// binary for it (a link is most of a check's cost). Check then runs that
// binary as it runs the one it would have built (Options.prebuilt): one
// process per variant, with the variant's own record, exit code, timeout
// and race detector, its output read as the exercise's own. TestVariants
// proves the verdicts equal on a sample graded both ways.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/operator-lab/lab/internal/proc"
	"github.com/operator-lab/lab/internal/tally"
	"github.com/operator-lab/lab/labs"
)

// VariantSource is one learner variant of one exercise: the workspace
// files (slash paths) it writes over the solution.
type VariantSource struct {
	Key      string
	Exercise *labs.Exercise
	Files    map[string]string
}

// VariantBinaries are the linked variants: Prebuilt gives Check the binary
// of those that have one, and Skipped says why the others must be built
// as a learner's check builds them.
type VariantBinaries struct {
	module  string
	number  map[string]int // key → the variant's number in the binaries
	ex      map[string]*labs.Exercise
	binary  map[*labs.Exercise]string
	Skipped map[string]string // key → why it has no binary here
}

// The folders of a combined build: variant N's copy of an exercise's
// package and of its checks, and the binary's own test package.
const (
	variantDir  = "labvariant"
	combinedDir = "labcombined"
	// variantCheckSuffix replaces _test.go in the checks' copies, which
	// are an ordinary package; what they print is put back.
	variantCheckSuffix = "_test_.go"
	variantEnv         = "LAB_VARIANT"
)

// BuildVariantBinaries makes one combined build, in dir, of the lab's
// solved workspace solvedDir with every variant that can share a binary,
// and links one binary per exercise. A variant that cannot share one (it
// adds an init or a side effect at package level, imports what the
// exercise's binary would not link, touches another package, or the go
// command's vet or compiler has something to say about it) is in Skipped:
// the real path grades it.
func BuildVariantBinaries(ctx context.Context, lab *labs.Lab, solvedDir, dir string, variants []VariantSource) (*VariantBinaries, error) {
	b := &VariantBinaries{module: lab.Module, number: map[string]int{}, ex: map[string]*labs.Exercise{},
		binary: map[*labs.Exercise]string{}, Skipped: map[string]string{}}
	// The checks are in the build, as in a check's: what they link is
	// what the exercise's binary links.
	if err := prepare(lab, solvedDir, dir, checkFiles(lab.Exercises)); err != nil {
		return nil, err
	}
	env := GoEnv("", nil)
	closure := map[*labs.Exercise]map[string]bool{}
	var files []File
	for i, v := range variants {
		e := v.Exercise
		if closure[e] == nil {
			deps, err := goList(ctx, dir, env, "-deps", "-test", "./"+e.Package)
			if err != nil {
				return nil, err
			}
			closure[e] = deps
		}
		copied, why, err := variantCopy(lab, solvedDir, v, i, closure[e])
		if err != nil {
			return nil, err
		}
		if why != "" {
			b.Skipped[v.Key] = why
			continue
		}
		b.number[v.Key], b.ex[v.Key] = i, e
		files = append(files, copied...)
	}
	if err := writeFiles(dir, files); err != nil {
		return nil, err
	}
	if err := b.vet(ctx, dir, env); err != nil {
		return nil, err
	}
	byRace := map[bool][]*labs.Exercise{}
	for _, e := range lab.Exercises {
		var members []int
		for key, n := range b.number {
			if b.ex[key] == e {
				members = append(members, n)
			}
		}
		if len(members) == 0 {
			continue
		}
		slices.Sort(members)
		wrapper, err := wrapperFiles(lab, e, members)
		if err != nil {
			return nil, err
		}
		if err := writeFiles(dir, wrapper); err != nil {
			return nil, err
		}
		byRace[e.Race] = append(byRace[e.Race], e)
	}
	binDir := filepath.Join(dir, ".bin")
	for race, exercises := range byRace {
		args := checkBuildArgs(binDir, race)
		for _, e := range exercises {
			args = append(args, "./"+path.Join(combinedDir, e.Package))
		}
		cmd := proc.Command(ctx, "go", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("link the variants (race %v): %w\n%s", race, err, out)
		}
		tally.Add(tally.Link, len(exercises))
		for _, e := range exercises {
			b.binary[e] = filepath.Join(binDir, path.Base(e.Package)+".test")
		}
	}
	return b, nil
}

// Prebuilt returns opts running the binaries of the variants named by keys
// (those that have one) for their exercises.
func (b *VariantBinaries) Prebuilt(opts Options, keys []string) Options {
	opts.prebuilt = map[*labs.Exercise]*prebuiltBinary{}
	for _, key := range keys {
		n, ok := b.number[key]
		if !ok {
			continue
		}
		e := b.ex[key]
		if opts.Race && !e.Race {
			continue // its binary has no race detector
		}
		opts.prebuilt[e] = &prebuiltBinary{
			path:   b.binary[e],
			env:    []string{variantEnv + "=" + strconv.Itoa(n)},
			output: func(r io.Reader) io.Reader { return asExercise(r, b.module, e, n) },
		}
	}
	return opts
}

// Has reports whether the variant has a binary here.
func (b *VariantBinaries) Has(key string) bool {
	_, ok := b.number[key]
	return ok
}

// variantCopy returns the files of variant n's copy of its exercise's
// package and checks, or why the variant cannot share a binary.
func variantCopy(lab *labs.Lab, solvedDir string, v VariantSource, n int, closure map[string]bool) ([]File, string, error) {
	e := v.Exercise
	pkgDir := filepath.Join(solvedDir, filepath.FromSlash(e.Package))
	sources := map[string][]byte{}
	entries, err := os.ReadDir(pkgDir)
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", e.Package, err)
	}
	for _, en := range entries {
		if name := en.Name(); !en.IsDir() && strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			if sources[name], err = os.ReadFile(filepath.Join(pkgDir, name)); err != nil {
				return nil, "", err
			}
		}
	}
	solution := sideEffects(sources)
	for rel, text := range v.Files {
		if path.Dir(rel) != e.Package || !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil, rel + " is not a Go file of the exercise's package", nil
		}
		sources[path.Base(rel)] = []byte(text)
	}
	fset := token.NewFileSet()
	copyPath := path.Join(variantDir+strconv.Itoa(n), e.Package)
	var out []File
	for name, src := range sources {
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			return nil, name + " does not parse", nil
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !closure[p] {
				return nil, "imports " + p + ", which the exercise's binary does not link", nil
			}
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == "init" {
				return nil, name + " has an init function", nil
			}
		}
		for _, effect := range sideEffects(map[string][]byte{name: src}) {
			if !slices.Contains(solution, effect) {
				return nil, name + " calls at package level: " + effect, nil
			}
		}
		out = append(out, File{path.Join(copyPath, name), constant(src)})
	}
	for _, c := range e.Checks {
		src, err := checkSource(e, c)
		if err != nil {
			return nil, "", err
		}
		src, err = importFrom(src, lab.Module+"/"+e.Package, lab.Module+"/"+copyPath)
		if err != nil {
			return nil, "", fmt.Errorf("check %s: %w", c, err)
		}
		name := strings.TrimSuffix(path.Base(c), "_test.go") + variantCheckSuffix
		out = append(out, File{path.Join(copyPath+"_test", name), constant(src)})
	}
	return out, "", nil
}

// sideEffects are the package-level variable declarations of sources that
// call something, as text: what runs when the package is initialized.
func sideEffects(sources map[string][]byte) []string {
	var out []string
	fset := token.NewFileSet()
	for name, src := range sources {
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			continue
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, s := range gd.Specs {
				calls := false
				ast.Inspect(s, func(n ast.Node) bool {
					switch n.(type) {
					case *ast.CallExpr:
						calls = true
					case *ast.FuncLit:
						return false // its body runs when called, not at init
					}
					return !calls
				})
				if calls {
					var buf bytes.Buffer
					_ = printer.Fprint(&buf, fset, s)
					out = append(out, buf.String())
				}
			}
		}
	}
	return out
}

// importFrom rewrites src's import of from to to, on the same line.
func importFrom(src []byte, from, to string) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ImportsOnly)
	if err != nil {
		return nil, err
	}
	for _, imp := range f.Imports {
		if imp.Path.Value == strconv.Quote(from) {
			start, end := fset.Position(imp.Path.Pos()).Offset, fset.Position(imp.Path.End()).Offset
			return slices.Concat(src[:start], []byte(strconv.Quote(to)), src[end:]), nil
		}
	}
	return nil, fmt.Errorf("does not import %s", from)
}

// vet runs the go command's vet over every variant's copies, as go test
// -c would over the exercise's package and checks, and moves the variants
// it has anything to say about (a compile error included) to Skipped.
func (b *VariantBinaries) vet(ctx context.Context, dir string, env []string) error {
	var pkgs []string
	for key, n := range b.number {
		p := "./" + path.Join(variantDir+strconv.Itoa(n), b.ex[key].Package)
		pkgs = append(pkgs, p, p+"_test")
	}
	if len(pkgs) == 0 {
		return nil
	}
	cmd := proc.Command(ctx, "go", append([]string{"vet", TrimPath}, pkgs...)...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	said := map[int]bool{}
	for _, m := range vetHeaderRe.FindAllSubmatch(out, -1) {
		n, _ := strconv.Atoi(string(m[1]))
		said[n] = true
	}
	if len(said) == 0 {
		return fmt.Errorf("go vet of the variants: %w\n%s", err, out)
	}
	for key, n := range b.number {
		if said[n] {
			b.Skipped[key] = "go vet or the compiler reports on it"
			delete(b.number, key)
		}
	}
	return nil
}

var vetHeaderRe = regexp.MustCompile(`(?m)^#.*/` + variantDir + `(\d+)/`)

// wrapperFiles are the combined binary's test package for an exercise: its
// checks' top-level tests, in the order go test runs them, each calling
// the test of the variant LAB_VARIANT names; and lab's TestMain.
func wrapperFiles(lab *labs.Lab, e *labs.Exercise, members []int) ([]File, error) {
	var tests []string
	checks := slices.Sorted(slices.Values(e.Checks))
	for _, c := range checks {
		src, err := checkSource(e, c)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(token.NewFileSet(), c, src, 0)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil {
				continue
			}
			name := fd.Name.Name
			switch {
			case strings.HasPrefix(name, "Test") && name != "TestMain":
				tests = append(tests, name)
			case strings.HasPrefix(name, "Example"), strings.HasPrefix(name, "Fuzz"), strings.HasPrefix(name, "Benchmark"):
				return nil, fmt.Errorf("check %s: %s: the variant binaries run tests only", c, name)
			}
		}
	}
	var w strings.Builder
	fmt.Fprintf(&w, "// Code the checker's tests generate: the variants of %s, one chosen by $%s.\npackage combined_test\n\nimport (\n\t\"os\"\n\t\"testing\"\n", e.ID, variantEnv)
	for _, n := range members {
		fmt.Fprintf(&w, "\tv%d %q\n", n, lab.Module+"/"+path.Join(variantDir+strconv.Itoa(n), e.Package)+"_test")
	}
	fmt.Fprintf(&w, ")\n\ntype tests struct{ %s func(*testing.T) }\n\nvar chosen = map[string]tests{\n", strings.Join(tests, ", "))
	for _, n := range members {
		var fns []string
		for _, t := range tests {
			fns = append(fns, fmt.Sprintf("v%d.%s", n, t))
		}
		fmt.Fprintf(&w, "\t%q: {%s},\n", strconv.Itoa(n), strings.Join(fns, ", "))
	}
	fmt.Fprintf(&w, "}[os.Getenv(%q)]\n", variantEnv)
	for _, t := range tests {
		fmt.Fprintf(&w, "\nfunc %s(t *testing.T) { chosen.%s(t) }\n", t, t)
	}
	dir := path.Join(combinedDir, e.Package)
	return []File{
		{path.Join(dir, "variants_test.go"), constant([]byte(w.String()))},
		{path.Join(dir, recordMainFile), constant(fmt.Appendf(nil, recordMainSource, "combined_test"))},
	}, nil
}

// asExercise reads a variant binary's test2json stream as the exercise's
// own binary would have printed it: the copies' package paths and check
// file names put back, and the wrapper's frames (in stack traces) left out.
func asExercise(r io.Reader, module string, e *labs.Exercise, n int) io.Reader {
	copyPath := module + "/" + variantDir + strconv.Itoa(n) + "/"
	checks := copyPath + e.Package + "_test/"
	pr, pw := io.Pipe()
	go func() {
		lines := bufio.NewReaderSize(r, 64<<10)
		for {
			line, err := lines.ReadBytes('\n')
			if !bytes.Contains(line, []byte("/"+combinedDir+"/")) {
				line = bytes.ReplaceAll(line, []byte(checks), []byte(module+"/"+e.Package+"/"))
				line = bytes.ReplaceAll(line, []byte(copyPath), []byte(module+"/"))
				line = bytes.ReplaceAll(line, []byte(variantCheckSuffix), []byte("_test.go"))
				if _, werr := pw.Write(line); werr != nil {
					return
				}
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}

// goList returns the import paths `go list ARGS` prints.
func goList(ctx context.Context, dir string, env []string, args ...string) (map[string]bool, error) {
	cmd := proc.Command(ctx, "go", append([]string{"list"}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w", strings.Join(args, " "), err)
	}
	set := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		set[p] = true
	}
	return set, nil
}

func constant(b []byte) func() ([]byte, error) { return func() ([]byte, error) { return b, nil } }
