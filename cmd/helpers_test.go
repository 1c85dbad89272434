package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/operator-lab/lab/internal/iostreams"
	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/labs"
)

// labCmd runs one lab command line in-process and returns its output. (The
// learner's flows through the real entry point are the scripts of
// TestScripts.)
func labCmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	code = Execute(ctx, ios, args)
	return out.String(), errOut.String(), code
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := labCmd(t, args...)
	if code != 0 {
		t.Fatalf("lab %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newTestWorkspace runs `lab init 3.1` into a new folder and returns it.
func newTestWorkspace(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ws")
	mustRun(t, "init", "3.1", "--dir", dir, "--lang", "en")
	return dir
}

func mustLab(t *testing.T, id string) *labs.Lab {
	t.Helper()
	lab, err := labs.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	return lab
}

// syncStreams are test streams (no terminal, no colour) whose output can be
// read while a command is still writing it.
func syncStreams() (streams *iostreams.IOStreams, out, errOut *labtest.SyncBuffer) {
	streams, _, _, _ = iostreams.Test()
	out, errOut = &labtest.SyncBuffer{}, &labtest.SyncBuffer{}
	streams.Out, streams.ErrOut = out, errOut
	return streams, out, errOut
}
