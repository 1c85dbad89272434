package workspace

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/operator-lab/lab/labs"
)

// TestClassroomPoints: without a classroom file an exercise is worth its
// lab.yaml points; the file ClassroomYAML writes reads back as those; a
// teacher's edit weighs an exercise otherwise; a file lab cannot trust is
// a clear error, never a silent default.
func TestClassroomPoints(t *testing.T) {
	lab, err := labs.Get("3.1")
	if err != nil {
		t.Fatal(err)
	}
	own := map[string]int{}
	for _, e := range lab.Exercises {
		own[e.ID] = e.Points
	}
	dir := t.TempDir()
	got, err := Points(lab, dir)
	if err != nil || !maps.Equal(got, own) {
		t.Fatalf("without a classroom file: %v, %v; want the lab's %v", got, err, own)
	}
	write := func(content string) {
		if err := os.WriteFile(filepath.Join(dir, ClassroomFile), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(string(ClassroomYAML(lab)))
	if got, err := Points(lab, dir); err != nil || !maps.Equal(got, own) {
		t.Fatalf("the file ClassroomYAML writes: %v, %v; want the lab's %v", got, err, own)
	}
	write("lab: \"3.1\"\npoints:\n  reads: 25\n  manager: 0\n")
	want := maps.Clone(own)
	want["reads"], want["manager"] = 25, 0
	if got, err := Points(lab, dir); err != nil || !maps.Equal(got, want) {
		t.Fatalf("a teacher's points: %v, %v; want %v", got, err, want)
	}
	for _, c := range []struct{ name, content, want string }{
		{"an exercise the lab has not", "lab: \"3.1\"\npoints:\n  statemachine: 5\n", `has no exercise "statemachine"`},
		{"an exercise by number", "lab: \"3.1\"\npoints:\n  \"2\": 5\n", "name exercise 2 by its id"},
		{"negative points", "lab: \"3.1\"\npoints:\n  reads: -5\n", "points are 0 or more"},
		{"another lab's file", "lab: \"4.4\"\npoints:\n  reads: 5\n", `is for lab "4.4"`},
		{"a misspelt field", "lab: \"3.1\"\npoint:\n  reads: 5\n", "unknown field"},
		{"not YAML", "lab: [\n", "see `lab classroom init --help`"},
	} {
		write(c.content)
		if _, err := Points(lab, dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}
