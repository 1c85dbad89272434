package cmd

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/workspace"
)

// TestScripts runs the learner's command-line flows in testdata/script:
// each script runs `lab` (this test binary under that name, see TestMain)
// as a separate process, as a learner would, and asserts what it prints,
// its exit status and the files it leaves.
func TestScripts(t *testing.T) {
	goEnv := scriptGoEnv(t)
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(env *testscript.Env) error {
			env.Vars = append(env.Vars, goEnv...)
			return setupScript(env)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":      cmdExits,
			"labfile":    cmdLabfile,
			"buildfiles": cmdBuildfiles,
			"hashes":     cmdHashes,
			"glob":       cmdGlob,
		},
		// `exec lab` says at each line that lab is a process of its own.
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
	})
}

// scriptGoEnv is the go command's environment for lab in a script. A
// built lab pins a new workspace's go.mod to the modules in its build
// information; a test binary has none, so lab asks `go list -m all` in
// lab's module instead (see workspace.Pinned), and a script runs outside
// it: GOWORK names lab's module from anywhere (lab's own builds of a
// workspace set GOWORK=off). The modules are the developer's, from their
// module cache, never downloaded (GOPROXY=off); workspace mode wants
// go.sum lines lab's go.sum does not have and would ask the checksum
// database for them, over the network, so GOSUMDB=off: the cache was
// verified when it was filled. Nor is a toolchain (GOTOOLCHAIN=local).
// Go's build cache stays where it is, as for the rest of the tests.
func scriptGoEnv(t *testing.T) []string {
	out, err := exec.Command("go", "env", "GOMOD", "GOMODCACHE", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	vals := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(vals) != 3 || filepath.Base(vals[0]) != "go.mod" {
		t.Fatalf("go env GOMOD GOMODCACHE GOCACHE: %q", out)
	}
	dir := t.TempDir()
	work := exec.Command("go", "work", "init", filepath.Dir(vals[0]))
	work.Dir = dir
	work.Env = append(os.Environ(), "GOWORK=")
	if out, err := work.CombinedOutput(); err != nil {
		t.Fatalf("go work init: %v\n%s", err, out)
	}
	// The modules the scripts' lab will ask for must be in the cache: on a
	// fresh machine a build downloads only the modules it compiles, and
	// workspace mode also reads modules the build list names beside them
	// (github.com/evanphx/json-patch, to rule out an ambiguous import). Ask
	// once with the proxy on, as lab will ask with it off.
	warm := exec.Command("go", "list", "-deps", "-test", "github.com/operator-lab/lab/...")
	warm.Dir = dir
	warm.Env = append(os.Environ(), "GOWORK="+filepath.Join(dir, "go.work"))
	if out, err := warm.CombinedOutput(); err != nil {
		t.Fatalf("fill the module cache for the scripts: %v\n%s", err, out)
	}
	return []string{
		"GOWORK=" + filepath.Join(dir, "go.work"),
		"GOMODCACHE=" + vals[1],
		"GOCACHE=" + vals[2],
		"GOPROXY=off",
		"GOSUMDB=off",
		"GOTOOLCHAIN=local",
	}
}

// setupScript gives each script a home, lab state folder, cache and temp
// folder of its own under $WORK: lab never reads the developer's progress,
// build files or setup store, and never attaches to their `lab env up`.
// (The environment of a script is only what testscript and this set; the
// test binary's own hermetic folders are not passed on.)
func setupScript(env *testscript.Env) error {
	for name, dir := range map[string]string{
		"HOME":           ".home",
		"LAB_STATE_DIR":  ".state",
		"XDG_CACHE_HOME": ".cache",
		"TMPDIR":         ".tmp",
	} {
		path := filepath.Join(env.WorkDir, dir)
		if err := os.MkdirAll(path, 0o700); err != nil {
			return err
		}
		env.Setenv(name, path)
	}
	// Nor does a script's `lab init` leave a build of the checks running.
	env.Setenv(workspace.BackgroundBuildEnv, "off")
	return nil
}

// cmdExits runs a program that must end with a given exit status:
//
//	exits 1 lab frobnicate
//
// `! exec` accepts any failure, a crash (lab's internal error is 70) or a
// signal as well as a clean refusal; this tells them apart.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() < 0 {
			ts.Fatalf("%s: %v, want exit status %d", args[1], err, want)
		}
		got = exit.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s: exit status %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

// cmdLabfile writes a learner's file as lab ships it, so a script can cmp
// a workspace file against the real starter or solution:
//
//	labfile starter 3.1 results/reconciler.go want.go
func cmdLabfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 || (args[0] != "starter" && args[0] != "solution") {
		ts.Fatalf("usage: labfile starter|solution LAB FILE OUT")
	}
	lab, err := labs.Get(args[1])
	ts.Check(err)
	ex := lab.ExerciseForFile(args[2])
	if ex == nil {
		ts.Fatalf("lab %s has no exercise file %s", args[1], args[2])
	}
	read := ex.Starter
	if args[0] == "solution" {
		read = ex.Solution
	}
	b, err := read(args[2])
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[3]), b, 0o644))
}

// cmdBuildfiles makes the build files a check would have left for a
// workspace (a 3 MiB test binary among them) where lab keeps them, in the
// script's cache, and sets $BUILDBIN to that binary. Only a real check
// makes real ones, and that needs a control plane.
//
//	buildfiles ws
func cmdBuildfiles(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: buildfiles WORKSPACE")
	}
	// checker.BuildFiles names them in this process's cache (the test
	// binary's); lab, run by the script, looks in the script's.
	paths, err := checker.BuildFiles(ts.MkAbs(args[0]))
	ts.Check(err)
	ours, err := os.UserCacheDir()
	ts.Check(err)
	rel, err := filepath.Rel(ours, paths[1]) // the checks' binary folder
	ts.Check(err)
	if strings.HasPrefix(rel, "..") {
		ts.Fatalf("build file %s is outside the cache %s", paths[1], ours)
	}
	cache := ts.Getenv("XDG_CACHE_HOME")
	if !filepath.IsAbs(cache) {
		ts.Fatalf("XDG_CACHE_HOME=%q: the script has no cache of its own", cache)
	}
	bin := filepath.Join(cache, rel, "results.test")
	ts.Check(os.MkdirAll(filepath.Dir(bin), 0o700))
	ts.Check(os.WriteFile(bin, make([]byte, 3<<20), 0o700))
	ts.Setenv("BUILDBIN", bin)
}

// cmdHashes prints every file under a folder with a hash of its content,
// sorted, so that `cp stdout` before and `cmp stdout` after a command show
// it changed nothing in the folder.
//
//	hashes ws
func cmdHashes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: hashes DIR")
	}
	root := ts.MkAbs(args[0])
	out := ts.Stdout() // even for an empty folder: stdout is then empty
	ts.Check(filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		_, err = fmt.Fprintf(out, "%x %s\n", sha256.Sum256(b), filepath.ToSlash(rel))
		return err
	}))
}

// cmdGlob sets a variable to the one path matching a pattern, for names
// lab makes up (a backup folder is named by the time):
//
//	glob ws/.lab/backups/*-reset-results BACKUP
func cmdGlob(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: glob PATTERN VAR")
	}
	matches, err := filepath.Glob(ts.MkAbs(args[0]))
	ts.Check(err)
	if len(matches) != 1 {
		ts.Fatalf("%s matches %d paths, want one: %v", args[0], len(matches), matches)
	}
	ts.Setenv(args[1], matches[0])
}
