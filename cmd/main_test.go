package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/rogpeppe/go-internal/testscript"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/internal/proc"
)

// TestMain lets this test binary supervise the children that the commands
// it runs in-process start (see package proc), and gives the whole binary
// its own lab state folder and cache: a session a test starts never
// attaches to a developer's `lab env up`, nor uses their build folders.
//
// The binary is also `lab` itself for the scripts of TestScripts:
// testscript.Main puts a copy named lab on their PATH, and when started
// under that name it runs lab's real entry point instead of the tests. That
// process is a lab, not a test run: it gets no hermetic folders of its own
// (hermeticTests.Run never runs in it), only those its script gave it.
func TestMain(m *testing.M) {
	// First: the supervisor this binary re-executes itself as is neither
	// the tests nor lab.
	if code, ok := proc.RunIfSupervisor(); ok {
		os.Exit(code)
	}
	testscript.Main(hermeticTests{m}, map[string]func(){
		"lab": func() { os.Exit(Main()) },
		// A lab with commands that panic, for crash.txtar.
		"lab-crashing": func() {
			testCommands = crashCommands()
			os.Exit(Main())
		},
	})
}

// hermeticTests is m.Run inside labtest.HermeticProcess.
type hermeticTests struct{ m *testing.M }

func (h hermeticTests) Run() int {
	// As lab's Main does: the commands run here in-process, and
	// controller-runtime prints a stack trace when no logger is set.
	ctrllog.SetLogger(logr.Discard())
	cleanup, err := labtest.HermeticProcess()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cmd tests:", err)
		return 1
	}
	defer cleanup()
	defer labtest.RemoveBinary()
	return h.m.Run()
}

// TestTheBinaryIsHermetic: TestMain gave this binary its own state folder
// and cache, and left Go's build cache where it was.
func TestTheBinaryIsHermetic(t *testing.T) {
	cache := os.Getenv("XDG_CACHE_HOME")
	state, err := controlplane.StateDir()
	if err != nil {
		t.Fatal(err)
	}
	if cache == "" || !strings.HasPrefix(state, os.TempDir()) || filepath.Dir(state) != filepath.Dir(cache) {
		t.Errorf("the state folder %s is not the binary's own (XDG_CACHE_HOME=%q)", state, cache)
	}
	if root := checker.CacheRoot(); !strings.HasPrefix(root, cache+string(filepath.Separator)) {
		t.Errorf("the check builds are under %s, not the binary's cache %s", root, cache)
	}
	if goCache := os.Getenv("GOCACHE"); goCache == "" || strings.HasPrefix(goCache, cache) {
		t.Errorf("GOCACHE=%q: Go's build cache moved with the binary's cache %s", goCache, cache)
	}
}
