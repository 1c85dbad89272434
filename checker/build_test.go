package checker

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// TestPrepareLeavesOutLearnerTests: the private build holds the hidden
// checks and none of the learner's own test files.
func TestPrepareLeavesOutLearnerTests(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	files := map[string]string{
		"go.mod":                "module example.com/x\n\ngo 1.26.0\n",
		"pkg/a.go":              "package pkg\n",
		"pkg/a_test.go":         "package pkg\n",
		".lab/progress.json":    "{}",
		".git/config":           "",
		"pkg/sub/b.go":          "package sub\n",
		"pkg/pkg_check_test.go": "package pkg_test // the learner's fake\n",
	}
	for name, content := range files {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := copyWorkspace(src, dst); err != nil {
		t.Fatal(err)
	}
	for name := range files {
		_, err := os.Stat(filepath.Join(dst, name))
		copied := err == nil
		wantCopied := !strings.HasSuffix(name, "_test.go") && !strings.HasPrefix(name, ".")
		if copied != wantCopied {
			t.Errorf("%s copied = %v, want %v", name, copied, wantCopied)
		}
	}
}

// TestPrivateGoModPointsAtTheSupportFolder: the private build's go.mod is
// the workspace's with the support module required once and replaced by
// its folder, and the support module has the workspace's go line.
func TestPrivateGoModPointsAtTheSupportFolder(t *testing.T) {
	lab, _ := fixtureLab(t)
	workspaceMod := "module " + fixtureModule + "\n\ngo 1.26.3\n\nrequire (\n\tsigs.k8s.io/controller-runtime v0.25.2\n\t" +
		supportModule + " v1.0.0 // a learner's own, replaced\n)\n"
	mod, support, err := privateGoMods(lab, []byte(workspaceMod))
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse("go.mod", mod, nil)
	if err != nil {
		t.Fatalf("the private go.mod does not parse: %v\n%s", err, mod)
	}
	var required []string
	for _, r := range f.Require {
		required = append(required, r.Mod.String())
	}
	if want := []string{"sigs.k8s.io/controller-runtime@v0.25.2", supportModule + "@" + supportVersion}; !slices.Equal(required, want) {
		t.Errorf("requires %v, want %v:\n%s", required, want, mod)
	}
	if len(f.Replace) != 1 || f.Replace[0].Old.Path != supportModule || f.Replace[0].New.Path != "./"+supportDir {
		t.Errorf("replaces %v, want %s => ./%s:\n%s", f.Replace, supportModule, supportDir, mod)
	}
	s, err := modfile.Parse("go.mod", support, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Module.Mod.Path != supportModule || s.Go == nil || s.Go.Version != "1.26.3" {
		t.Errorf("support go.mod:\n%s\nwant module %s, go 1.26.3", support, supportModule)
	}

	if _, _, err := privateGoMods(lab, []byte("module "+fixtureModule+"\n\nrequre x v1\n")); err == nil || !strings.Contains(err.Error(), "go.mod:3") {
		t.Errorf("a go.mod with a typo: %v, want an error naming its line", err)
	}
}
