package checker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
