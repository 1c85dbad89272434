package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/operator-lab/lab/labs"
)

// ClassroomFile, at the workspace's root, weighs the exercises for a
// class: what each is worth in a score. `lab classroom init` writes it with
// the lab's own points; a teacher edits it, and every score lab gives (the
// report, JUnit, GitHub Classroom's) reads it.
const ClassroomFile = "classroom.yaml"

// Classroom is the content of ClassroomFile.
type Classroom struct {
	Lab string `json:"lab"`
	// Points per exercise id; an exercise left out is worth its lab.yaml
	// points.
	Points map[string]int `json:"points"`
}

// Points returns what each exercise of lab is worth in the workspace at
// dir (by exercise id): the lab's points, as ClassroomFile weighs them when
// the workspace has one.
func Points(lab *labs.Lab, dir string) (map[string]int, error) {
	points := map[string]int{}
	for _, e := range lab.Exercises {
		points[e.ID] = e.Points
	}
	path := filepath.Join(dir, ClassroomFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return points, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var c Classroom
	if err := yaml.UnmarshalStrict(raw, &c); err != nil {
		return nil, fmt.Errorf("%s: %w (see `lab classroom init --help` for its shape)", path, err)
	}
	if c.Lab != lab.ID {
		return nil, fmt.Errorf("%s is for lab %q, this workspace is lab %s", path, c.Lab, lab.ID)
	}
	for id, n := range c.Points {
		if _, ok := points[id]; !ok {
			e, err := lab.Exercise(id)
			if err == nil {
				err = fmt.Errorf("name exercise %d by its id, %s", e.Number, e.ID)
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if n < 0 {
			return nil, fmt.Errorf("%s: exercise %s is worth %d points; points are 0 or more", path, id, n)
		}
		points[id] = n
	}
	return points, nil
}

// ClassroomYAML is ClassroomFile for lab with the lab's own points, and a
// comment that says how it is read.
func ClassroomYAML(lab *labs.Lab) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# What each exercise of lab %s is worth in a score: lab check's report and\n", lab.ID)
	b.WriteString("# JUnit, and GitHub Classroom's (.github/workflows/classroom.yml). Passing an\n")
	b.WriteString("# exercise earns all its points; failing it, none. Edit the numbers to weigh\n")
	b.WriteString("# the exercises otherwise (0 leaves one out of the score).\n")
	fmt.Fprintf(&b, "lab: %q\npoints:\n", lab.ID)
	for _, e := range lab.Exercises {
		fmt.Fprintf(&b, "  %s: %d\n", e.ID, e.Points)
	}
	return b.Bytes()
}
