package l10n

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const importPath = "github.com/operator-lab/lab/internal/l10n"

// sourceKeys finds every interface text the module's code renders: the
// string literals given to Text, Textf, Count and Mark in the packages that
// import this one (in every file: a file may use a Printer another file of
// its package holds) and in this package's own files.
func sourceKeys(t *testing.T) (texts, counts map[string]string) {
	t.Helper()
	texts, counts = map[string]string{}, map[string]string{}
	files := map[string][]*ast.File{} // by directory
	uses := map[string]bool{}         // directories with a file that imports this package
	paths := map[*ast.File]string{}
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// Learner workspaces' sources and test data are not lab's interface.
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ParseComments)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		files[dir], paths[f] = append(files[dir], f), path
		markedConstants(f, path, texts)
		own := f.Name.Name == "l10n" && filepath.Base(dir) == "l10n"
		if own || slices.ContainsFunc(f.Imports, func(s *ast.ImportSpec) bool { return s.Path.Value == strconv.Quote(importPath) }) {
			uses[dir] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir := range uses {
		for _, f := range files[dir] {
			inspectKeys(f, paths[f], texts, counts)
		}
	}
	return texts, counts
}

// constMarker in a const group's doc comment makes its string values
// keys: names a package declares as constants (the start-up steps) that
// the view renders with Text.
const constMarker = "(l10n:text)"

// markedConstants adds the string constants of f's marked const groups.
func markedConstants(f *ast.File, path string, texts map[string]string) {
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST || g.Doc == nil || !strings.Contains(g.Doc.Text(), constMarker) {
			continue
		}
		for _, spec := range g.Specs {
			for _, v := range spec.(*ast.ValueSpec).Values {
				if b, ok := v.(*ast.BasicLit); ok && b.Kind == token.STRING {
					if s, err := strconv.Unquote(b.Value); err == nil {
						texts[s] = path
					}
				}
			}
		}
	}
}

// inspectKeys adds the keys f gives to Text, Textf, Count and Mark.
func inspectKeys(f *ast.File, path string, texts, counts map[string]string) {
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		lit := func(i int) (string, bool) {
			if i >= len(call.Args) {
				return "", false
			}
			return stringConstant(call.Args[i])
		}
		switch sel.Sel.Name {
		case "Text", "Textf", "Mark":
			if s, ok := lit(0); ok {
				texts[s] = path
			}
		case "TextAs":
			if ctx, ok := lit(0); ok {
				if s, ok := lit(1); ok {
					texts[ctx+"|"+s] = path
				}
			}
		case "Count":
			if s, ok := lit(1); ok {
				counts[s] = path
			}
		}
		return true
	})
}

// stringConstant is the value of a string literal, or of literals joined
// with + (a long text written over several lines).
func stringConstant(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		x, okX := stringConstant(e.X)
		y, okY := stringConstant(e.Y)
		return x + y, okX && okY
	case *ast.ParenExpr:
		return stringConstant(e.X)
	}
	return "", false
}

var verb = regexp.MustCompile(`%[-+# 0-9.*]*[a-zA-Z%]`)

func verbs(s string) []string { return verb.FindAllString(s, -1) }

// TestRussianCatalogIsComplete fails for a text the code renders that has
// no Russian, a Russian entry no code renders, and a translation whose
// verbs differ from its key's (a %d where the key has %s prints garbage).
func TestRussianCatalogIsComplete(t *testing.T) {
	texts, counts := sourceKeys(t)
	for key, where := range texts {
		ru, ok := russian[key]
		if !ok {
			t.Errorf("%s: no Russian for %q", where, key)
			continue
		}
		if !slices.Equal(verbs(key), verbs(ru)) {
			t.Errorf("%s: the Russian of %q has verbs %v, the key %v", where, key, verbs(ru), verbs(key))
		}
	}
	for key, where := range counts {
		forms, ok := russianCounts[key]
		if !ok {
			t.Errorf("%s: no Russian count forms for %q", where, key)
			continue
		}
		for _, ru := range forms {
			if !slices.Equal(verbs(key), verbs(ru)) {
				t.Errorf("%s: the Russian form %q of %q has verbs %v, the key %v", where, ru, key, verbs(ru), verbs(key))
			}
		}
	}
	for key := range russian {
		if _, ok := texts[key]; !ok {
			t.Errorf("the Russian catalog translates %q, which no code renders", key)
		}
	}
	for key := range russianCounts {
		if _, ok := counts[key]; !ok {
			t.Errorf("the Russian count catalog has %q, which no code renders", key)
		}
	}
}

func TestRussianCountForms(t *testing.T) {
	for n, want := range map[int]int{0: 2, 1: 0, 2: 1, 4: 1, 5: 2, 11: 2, 12: 2, 14: 2, 21: 0, 22: 1, 25: 2, 101: 0, 111: 2, 112: 2, -1: 0} {
		if got := russianForm(n); got != want {
			t.Errorf("russianForm(%d) = %d, want %d", n, got, want)
		}
	}
}

// TestCatalogPartsDoNotOverlap fails when two parts translate one key:
// one of the two would silently win.
func TestCatalogPartsDoNotOverlap(t *testing.T) {
	texts := map[string]map[string]string{"ru_cli.go": russianCLI, "ru_frame.go": russianFrame, "ru_panes.go": russianPanes}
	counts := map[string]map[string][3]string{"ru_cli.go": russianCLICounts, "ru_frame.go": russianFrameCounts, "ru_panes.go": russianPanesCounts}
	overlap(t, texts)
	overlap(t, counts)
}

func overlap[V any](t *testing.T, parts map[string]map[string]V) {
	t.Helper()
	files := slices.Sorted(maps.Keys(parts))
	for i, a := range files {
		for _, b := range files[i+1:] {
			for key := range parts[a] {
				if _, ok := parts[b][key]; ok {
					t.Errorf("%q is translated in %s and in %s: keep it in one", key, a, b)
				}
			}
		}
	}
}

func TestPrinterFallsBackToEnglish(t *testing.T) {
	ru, en := For("ru"), For("en")
	const missing = "a text no catalog has %d"
	if got := ru.Textf(missing, 3); got != "a text no catalog has 3" {
		t.Errorf("Russian of an untranslated text = %q", got)
	}
	if got := en.Count(1, "%d call", "%d calls"); got != "1 call" {
		t.Errorf("English count of 1 = %q", got)
	}
	if got := en.Count(2, "%d call", "%d calls"); got != "2 calls" {
		t.Errorf("English count of 2 = %q", got)
	}
	if (Printer{}).Lang() != "en" || ru.Lang() != "ru" || !ru.Russian() {
		t.Errorf("languages: zero %q, ru %q", Printer{}.Lang(), ru.Lang())
	}
}
