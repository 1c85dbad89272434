package content

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// modulePath is this module. The snippets are compiled in a module of their
// own, snippetModule, outside the source tree, whose go.mod and go.sum are
// copies of this module's, so they use exactly its controller-runtime and
// Kubernetes versions.
const (
	modulePath    = "github.com/operator-lab/lab"
	snippetModule = "example.com/lab-snippets"
)

// snippetImports are the import paths a snippet may use without writing an
// import block: the usual aliases of controller-runtime code. A block without
// imports gets exactly the ones it references.
var snippetImports = map[string]string{
	"context":        "context",
	"errors":         "errors",
	"fmt":            "fmt",
	"rand":           "crypto/rand",
	"slices":         "slices",
	"strings":        "strings",
	"sync":           "sync",
	"time":           "time",
	"rate":           "golang.org/x/time/rate",
	"corev1":         "k8s.io/api/core/v1",
	"appsv1":         "k8s.io/api/apps/v1",
	"autoscalingv1":  "k8s.io/api/autoscaling/v1",
	"policyv1":       "k8s.io/api/policy/v1",
	"apierrors":      "k8s.io/apimachinery/pkg/api/errors",
	"meta":           "k8s.io/apimachinery/pkg/api/meta",
	"resource":       "k8s.io/apimachinery/pkg/api/resource",
	"metav1":         "k8s.io/apimachinery/pkg/apis/meta/v1",
	"runtime":        "k8s.io/apimachinery/pkg/runtime",
	"types":          "k8s.io/apimachinery/pkg/types",
	"corev1ac":       "k8s.io/client-go/applyconfigurations/core/v1",
	"metav1ac":       "k8s.io/client-go/applyconfigurations/meta/v1",
	"kubernetes":     "k8s.io/client-go/kubernetes",
	"retry":          "k8s.io/client-go/util/retry",
	"workqueue":      "k8s.io/client-go/util/workqueue",
	"ptr":            "k8s.io/utils/ptr",
	"ctrl":           "sigs.k8s.io/controller-runtime",
	"builder":        "sigs.k8s.io/controller-runtime/pkg/builder",
	"cache":          "sigs.k8s.io/controller-runtime/pkg/cache",
	"client":         "sigs.k8s.io/controller-runtime/pkg/client",
	"controller":     "sigs.k8s.io/controller-runtime/pkg/controller",
	"controllerutil": "sigs.k8s.io/controller-runtime/pkg/controller/controllerutil",
	"handler":        "sigs.k8s.io/controller-runtime/pkg/handler",
	"log":            "sigs.k8s.io/controller-runtime/pkg/log",
	"predicate":      "sigs.k8s.io/controller-runtime/pkg/predicate",
	"reconcile":      "sigs.k8s.io/controller-runtime/pkg/reconcile",
	"hellov1":        modulePath + "/operator/api/v1alpha1",
	"databasev1":     modulePath + "/operator/api/v1alpha1",
}

// The stand-in import paths snippets use for "your" packages, and the
// fixture (or lesson package) each is compiled against.
const (
	helloAPIPath        = "example.com/hello/api/v1"
	helloControllerPath = "example.com/hello/internal/controller"
	dbControllerPath    = "example.com/database/internal/controller"
)

// snippetFile is one generated Go file and where its code came from.
type snippetFile struct {
	path   string // relative to the snippet root
	block  codeBlock
	header int // lines added before the block's first line
}

// TestGoBlocksCompile writes every ```go block of every lesson, in every
// language, into packages of a copy of this module and runs `go vet` on them, so
// the lessons cannot drift into code that does not build against the
// project's controller-runtime. The blocks of one lesson and language form
// one package (package controller), so every helper a block calls must be
// shown in that lesson; a block that starts with a package clause is a file
// of its own package. The API types the blocks use are
// the reference operator's own API package (the snippet module requires
// this module): lesson 3.1's HelloWorld and lesson 4.4's Database.
func TestGoBlocksCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles every lesson snippet: skipped with -short")
	}
	root := t.TempDir() // outside the source tree: a crash leaves nothing in it
	snippetModuleFiles(t, root)
	rootImport := snippetModule

	// The lesson shows the API as the learner's own package; it is the
	// reference operator's.
	rewrite := strings.NewReplacer(
		strconv.Quote(helloAPIPath), strconv.Quote(modulePath+"/operator/api/v1alpha1"),
	)

	var files []snippetFile
	packages := map[string]bool{}
	counts := map[string]int{}
	for _, b := range allBlocks(t) {
		if b.kind != fenceGo {
			continue
		}
		pkgDir := "l" + strings.ReplaceAll(b.lesson, ".", "") + "_" + b.lang
		lessonPkg := rootImport + "/" + pkgDir
		rw := strings.NewReplacer(
			strconv.Quote(helloControllerPath), strconv.Quote(lessonPkg),
			strconv.Quote(dbControllerPath), strconv.Quote(lessonPkg),
		)
		code := rw.Replace(rewrite.Replace(b.code))
		counts[pkgDir]++
		n := counts[pkgDir]
		var f snippetFile
		switch {
		case strings.HasPrefix(strings.TrimSpace(code), "package "):
			dir := fmt.Sprintf("%s_file%d", pkgDir, n)
			f = snippetFile{path: filepath.Join(dir, "main.go"), block: b}
			writeFile(t, filepath.Join(root, f.path), code)
			packages[dir] = true
		default:
			header := "package controller\n\n"
			if !hasImports(code) {
				header += importsFor(t, b, code, rewrite)
			}
			f = snippetFile{path: filepath.Join(pkgDir, fmt.Sprintf("%s_%d.go", strings.ReplaceAll(b.section, "-", "_"), n)),
				block: b, header: strings.Count(header, "\n")}
			writeFile(t, filepath.Join(root, f.path), header+code)
			packages[pkgDir] = true
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatal("no go blocks found in the lessons")
	}

	args := []string{"vet"}
	for _, dir := range slices.Sorted(maps.Keys(packages)) {
		args = append(args, "./"+filepath.ToSlash(dir))
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("go vet of the lesson code blocks failed (%v):\n%s", err, explainVet(t, out.String(), root, files))
	}
	t.Logf("compiled and vetted %d go blocks in %d packages", len(files), len(packages))
}

// TestGoBlocksAreFormatted: code in the lessons is gofmt-formatted, as
// the learner's own code will be.
func TestGoBlocksAreFormatted(t *testing.T) {
	for _, b := range allBlocks(t) {
		if b.kind != fenceGo {
			continue
		}
		src := b.code
		header := ""
		if !strings.HasPrefix(strings.TrimSpace(src), "package ") {
			header = "package controller\n\n"
		}
		formatted, err := format.Source([]byte(header + src))
		if err != nil {
			t.Errorf("%s: go block does not parse: %v", b.where(), err)
			continue
		}
		if got := strings.TrimPrefix(string(formatted), header); got != src {
			t.Errorf("%s: go block is not gofmt-formatted; gofmt gives:\n%s", b.where(), got)
		}
	}
}

// hasImports reports whether a block brings its own import declarations.
func hasImports(code string) bool {
	return regexp.MustCompile(`(?m)^import[ (]`).MatchString(code)
}

// importsFor builds the import block for the package selectors a snippet uses.
func importsFor(t *testing.T, b codeBlock, code string, rewrite *strings.Replacer) string {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), "", "package controller\n"+code, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("%s: a go block does not parse: %v\n%s", b.where(), err, code)
	}
	used := map[string]bool{}
	ast.Inspect(file, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				if _, known := snippetImports[id.Name]; known {
					used[id.Name] = true
				}
			}
		}
		return true
	})
	if len(used) == 0 {
		return ""
	}
	var imports strings.Builder
	imports.WriteString("import (\n")
	for _, name := range slices.Sorted(maps.Keys(used)) {
		fmt.Fprintf(&imports, "\t%s %s\n", name, rewrite.Replace(strconv.Quote(snippetImports[name])))
	}
	imports.WriteString(")\n\n")
	return imports.String()
}

// explainVet maps "file.go:line:col: message" lines of vet's output back to
// the lesson file and line the code came from.
func explainVet(t *testing.T, output, root string, files []snippetFile) string {
	t.Helper()
	location := regexp.MustCompile(`([^\s:]+\.go):(\d+)(:\d+)?`)
	return location.ReplaceAllStringFunc(output, func(m string) string {
		parts := location.FindStringSubmatch(m)
		for _, f := range files {
			if !strings.HasSuffix(filepath.ToSlash(parts[1]), filepath.ToSlash(f.path)) {
				continue
			}
			line, _ := strconv.Atoi(parts[2])
			return fmt.Sprintf("%s:%d (%s)", lessonFileOf(f.block), blockFileLine(t, f.block)+line-f.header-1, f.block.section)
		}
		return m
	})
}

func lessonFileOf(b codeBlock) string { return "lessons/" + b.lesson + "/" + b.lang + ".md" }

// blockFileLine finds the line of a block's first code line in its lesson file.
func blockFileLine(t *testing.T, b codeBlock) int {
	t.Helper()
	raw, err := fs.ReadFile(lessonFiles, lessonFileOf(b))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(raw), b.code)
	if i < 0 {
		return 0
	}
	return strings.Count(string(raw[:i]), "\n") + 1
}

// snippetModuleFiles makes root the snippet module: this module's go.mod,
// under the name snippetModule, requiring this module from the source tree
// (so snippets import the real API packages), and its go.sum.
func snippetModuleFiles(t *testing.T, root string) {
	t.Helper()
	gomod, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	gosum, err := os.ReadFile(filepath.Join("..", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	moduleLine := regexp.MustCompile(`(?m)^module\s+` + regexp.QuoteMeta(modulePath) + `\s*$`)
	if !moduleLine.Match(gomod) {
		t.Fatalf("../go.mod does not declare module %s", modulePath)
	}
	if regexp.MustCompile(`(?m)^\s*replace\b|=>`).Match(gomod) {
		t.Fatal("../go.mod has replace directives, which the snippet module's copy of it would get wrong: teach snippetModuleFiles about them")
	}
	self, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	mod := moduleLine.ReplaceAllString(string(gomod), "module "+snippetModule) +
		fmt.Sprintf("\nrequire %s v0.0.0\n\nreplace %s => %s\n", modulePath, modulePath, strconv.Quote(filepath.ToSlash(self)))
	writeFile(t, filepath.Join(root, "go.mod"), mod)
	writeFile(t, filepath.Join(root, "go.sum"), string(gosum))
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
