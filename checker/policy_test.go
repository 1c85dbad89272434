package checker

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/operator-lab/lab/labs"
)

func vetSource(t *testing.T, src string) []violation {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	return vetFile(fset, "ex/x.go", f)
}

// TestPolicyFindsWhatNoExerciseNeeds: each way out of the check is found,
// under whatever name the file imports it by, with its line.
func TestPolicyFindsWhatNoExerciseNeeds(t *testing.T) {
	src := `package ex

import (
	"fmt"
	xos "os"
	"os/exec"
	"log"
	_ "unsafe"
	"testing"
	klog "k8s.io/klog/v2"
)

//go:linkname now runtime.nanotime

func init() {
	fmt.Println("--- PASS: TestX")
	xos.Exit(0)
}

func f() {
	_ = exec.Command("sh")
	log.Fatal("x")
	klog.Fatalf("x")
	_ = testing.Testing()
	_ = xos.WriteFile("p", nil, 0o644)
	_, _ = xos.ReadFile("p")
}
`
	got := vetSource(t, src)
	var lines []string
	for _, v := range got {
		lines = append(lines, v.String())
	}
	text := strings.Join(lines, "\n")
	for _, want := range []string{
		`ex/x.go:6: import "os/exec" (it starts other processes)`,
		`ex/x.go:8: import "unsafe"`,
		`ex/x.go:9: import "testing"`,
		`ex/x.go:13: //go:linkname`,
		`ex/x.go:17: xos.Exit (it ends the check's process early)`,
		`ex/x.go:22: log.Fatal`,
		`ex/x.go:23: klog.Fatalf`,
		`ex/x.go:25: xos.WriteFile (it writes files)`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
	if strings.Contains(text, "ReadFile") || strings.Contains(text, "Println") {
		t.Errorf("reading a file or printing is allowed:\n%s", text)
	}
}

func TestPolicyRefusesADotImportOfAGuardedPackage(t *testing.T) {
	got := vetSource(t, "package ex\n\nimport . \"os\"\n\nfunc f() { Exit(0) }\n")
	if len(got) != 1 || !strings.Contains(got[0].what, `import . "os"`) {
		t.Fatalf("got %v, want the dot import refused", got)
	}
}

// TestPolicyPassesTheLabsOwnCode: no starter or solution breaks the
// policy, so it never stands between a learner and a correct answer
// written the way the lab writes it.
func TestPolicyPassesTheLabsOwnCode(t *testing.T) {
	all, err := labs.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, lab := range all {
		for _, e := range lab.Exercises {
			for _, file := range e.Files {
				for kind, read := range map[string]func(string) ([]byte, error){"starter": e.Starter, "solution": e.Solution} {
					b, err := read(file)
					if err != nil {
						t.Fatal(err)
					}
					if vs := vetSource(t, string(b)); len(vs) > 0 {
						t.Errorf("lab %s, %s's %s %s: %v", lab.ID, e.ID, kind, file, vs)
					}
				}
			}
		}
	}
}
