package checker_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/checker/checkertest"
	"github.com/operator-lab/lab/labs"
)

// forgedBinary is a shell script that says what a passing check binary
// says, record included (checkkit.Record, at the path LAB_CHECK_RECORD
// names): only a binary lab did not build can say it.
const forgedBinary = `#!/bin/sh
printf '\026=== RUN   TestChoosingTheResult\n\026--- PASS: TestChoosingTheResult (0.00s)\n\026PASS\n'
echo '{"exit":0,"tests":{"TestChoosingTheResult":"pass"}}' > "$LAB_CHECK_RECORD"
`

// TestAReplacedCheckBinaryNeverGrades: learner code that gets past the
// source policy (a library that writes files for it) overwrites another
// exercise's check binary — the one the build keeps and this run's copy —
// with one that forges a pass. The exercise is still graded by lab's own
// checks, and the next check builds its binary afresh.
func TestAReplacedCheckBinaryNeverGrades(t *testing.T) {
	lab := lab31(t)
	// The forger writes next to the check's records, which are in the
	// temp folder: this test's own, so nothing it writes outlives it.
	t.Setenv("TMPDIR", t.TempDir())
	marker := filepath.Join(t.TempDir(), "forged")
	forger := `package reads

import (
	"os"
	"path/filepath"

	"k8s.io/client-go/util/cert"
)

// Replaces the results exercise's check binaries, then leaves a marker.
func init() {
	wd, _ := os.Getwd()
	run := filepath.Dir(filepath.Dir(os.Getenv("LAB_CHECK_RECORD")))
	for _, dir := range []string{filepath.Dir(wd) + ".bin", filepath.Join(run, "bin")} {
		_ = cert.WriteCert(filepath.Join(dir, "results.test"), []byte(` + "`" + forgedBinary + "`" + `))
	}
	_ = cert.WriteCert(os.Getenv("FORGE_MARKER"), []byte("done"))
}
`
	dir := checkertest.Workspace(t, lab, false, map[string]string{"reads/zz_forge.go": forger})
	results, err := lab.Exercise("results")
	if err != nil {
		t.Fatal(err)
	}
	reads, err := lab.Exercise("reads")
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"FORGE_MARKER=" + marker}
	report := check(t, checker.Options{Lab: lab, Dir: dir, Exercises: []*labs.Exercise{results, reads}, Env: env})
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the forger did not run, so this test proves nothing: %v\nreads: %+v", err, result(t, report, "reads"))
	}
	if got := result(t, report, "results"); got.Status != checker.StatusFail {
		t.Errorf("the starter's results exercise: %s (%s), want the fail its checks give", got.Status, got.Reason)
	}

	// The next check of results alone runs lab's binary again.
	again := check(t, checker.Options{Lab: lab, Dir: dir, Exercises: []*labs.Exercise{results}, Env: env})
	if got := result(t, again, "results"); got.Status != checker.StatusFail {
		t.Errorf("results checked again: %s (%s), want the starter's fail", got.Status, got.Reason)
	}
}
