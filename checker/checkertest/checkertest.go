// Package checkertest holds the test helpers that tests of the checker and
// of the packages that build on it (internal/mine) share: a lab by id and a
// workspace whose build files go when the test ends.
package checkertest

import (
	"testing"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/labs"
)

// Lab returns the lab with the given id or fails the test.
func Lab(tb testing.TB, id string) *labs.Lab {
	tb.Helper()
	lab, err := labs.Get(id)
	if err != nil {
		tb.Fatal(err)
	}
	return lab
}

// Workspace is labtest.Workspace whose build folders (large: a private copy
// and the compiled binaries) are removed when the test ends.
func Workspace(tb testing.TB, lab *labs.Lab, solved bool, overrides map[string]string) string {
	tb.Helper()
	dir := labtest.Workspace(tb, lab, solved, overrides)
	tb.Cleanup(func() {
		if err := checker.RemoveBuildFiles(dir); err != nil {
			tb.Errorf("remove build files: %v", err)
		}
	})
	return dir
}
