// Package tally counts the costly things a test run makes lab do — control
// planes started, binaries linked — so that `make test` can say what the
// suite cost. Each Add appends one line to the file $LAB_TEST_TALLY names;
// with it unset (every run but the suite's) Add does nothing. Lines are
// appended whole, so every test binary and lab process the suite starts can
// write to the one file at once.
package tally

import (
	"fmt"
	"os"
)

// Env names the file the counts go to.
const Env = "LAB_TEST_TALLY"

// What is counted.
const (
	ControlPlane = "control-plane" // a private control plane started
	Link         = "link"          // a binary linked by a build lab runs
)

// Add counts n of what, if the suite asked for counts.
func Add(what string, n int) {
	path := os.Getenv(Env)
	if path == "" || n <= 0 {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return // counting never fails what is counted
	}
	defer f.Close()
	_, _ = fmt.Fprintf(f, "%s %d\n", what, n)
}
