package checker

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestObserveCopyIsCurrent keeps the checker's embedded copy of the
// observation layer identical to operator/observe: run `go generate
// ./checker` after changing it.
func TestObserveCopyIsCurrent(t *testing.T) {
	live, err := filepath.Glob("../operator/observe/*.go")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	for _, p := range live {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want[filepath.Base(p)] = b
	}
	got := map[string][]byte{}
	err = fs.WalkDir(observeSources, "_observe", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(observeSources, p)
		got[d.Name()] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range want {
		if !bytes.Equal(got[name], b) {
			t.Errorf("checker/_observe/%s differs from operator/observe/%s: run `go generate ./checker`", name, name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("checker/_observe/%s no longer exists in operator/observe: run `go generate ./checker`", name)
		}
	}
}

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
