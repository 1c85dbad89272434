package checkkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// RecordEnv names the file the checker asks a check binary to write its
// Record to.
const RecordEnv = "LAB_CHECK_RECORD"

// Record is what a check binary says about its own run, apart from its
// output: the exit code of its tests and the last verdict of each
// top-level test, as the testing package framed them. The checker trusts a
// pass only with a record that agrees: exit 0 and every hidden test passed.
// The learner's code shares the process and can print anything, but it
// cannot write files (the checker's policy): a pass printed by init comes
// before the record starts, one printed during a test is followed by the
// test's real verdict, and none changes the exit code of m.Run.
type Record struct {
	Exit  int               `json:"exit"`
	Tests map[string]string `json:"tests"` // test → "pass", "fail" or "skip"
}

// Main runs the tests and, when RecordEnv names a file, writes the Record
// there. Every check package's TestMain is lab's:
//
//	func TestMain(m *testing.M) { os.Exit(checkkit.Main(m)) }
func Main(m *testing.M) int {
	path := os.Getenv(RecordEnv)
	if path == "" {
		return m.Run()
	}
	stdout := os.Stdout
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "lab: cannot record the checks: %v\n", err)
		return 1
	}
	// The testing package writes its framing to os.Stdout as it is when
	// the tests start: through the pipe, which passes everything on and
	// reads the verdicts.
	os.Stdout = w
	verdicts := &verdictWriter{tests: map[string]string{}}
	copied := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.MultiWriter(stdout, verdicts), r)
		close(copied)
	}()
	code := m.Run()
	os.Stdout = stdout
	_ = w.Close()
	<-copied
	b, err := json.Marshal(Record{Exit: code, Tests: verdicts.done()})
	if err == nil {
		err = os.WriteFile(path, b, 0o600)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "lab: cannot record the checks: %v\n", err)
		return 1
	}
	return code
}

// frame is a top-level test's verdict line in -test.v=test2json output:
// the testing package marks its framing lines with ^V.
var frame = regexp.MustCompile(`^\x16--- (PASS|FAIL|SKIP): ([^\s/]+) `)

// verdictWriter reads the lines written to it for the last verdict of each
// top-level test.
type verdictWriter struct {
	mu      sync.Mutex
	partial []byte
	tests   map[string]string
}

func (v *verdictWriter) Write(p []byte) (int, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.partial = append(v.partial, p...)
	for {
		i := bytes.IndexByte(v.partial, '\n')
		if i < 0 {
			break
		}
		if m := frame.FindSubmatch(v.partial[:i]); m != nil {
			v.tests[string(m[2])] = strings.ToLower(string(m[1]))
		}
		v.partial = v.partial[i+1:]
	}
	if len(v.partial) > 64<<10 {
		v.partial = v.partial[:0] // a line that long is no framing line
	}
	return len(p), nil
}

func (v *verdictWriter) done() map[string]string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.tests
}
