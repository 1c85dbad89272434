package classroom

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/labs"
)

func TestInstallVersion(t *testing.T) {
	for version, want := range map[string]string{
		"v1.4.0": "v1.4.0", "v2.0.0-rc.1": "v2.0.0-rc.1", "dev": "latest", "b8f670e-dirty": "latest", "v1.4": "latest",
	} {
		if got := InstallVersion(version); got != want {
			t.Errorf("InstallVersion(%q) = %q, want %q", version, got, want)
		}
	}
}

// TestOutputsAreWhatTheReporterReads: one output per exercise, named by
// its id, holding base64 JSON with the status, the points as max_score
// and one test whose score is what was earned; a failure says why.
func TestOutputsAreWhatTheReporterReads(t *testing.T) {
	lab, err := labs.Get("3.1")
	if err != nil {
		t.Fatal(err)
	}
	report := &checker.Report{Lab: lab, Results: []*checker.Result{
		{Exercise: lab.Exercises[0], Status: checker.StatusPass, Points: 10, Score: 10},
		{Exercise: lab.Exercises[1], Status: checker.StatusFail, Reason: "expected a ConfigMap, saw none", Points: 20},
	}}
	var out strings.Builder
	if err := WriteOutputs(&out, report); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d output lines, want 2:\n%s", len(lines), out.String())
	}
	for i, line := range lines {
		res := report.Results[i]
		name, value, _ := strings.Cut(line, "=")
		if name != res.Exercise.ID {
			t.Errorf("output %d is named %q, want %q", i, name, res.Exercise.ID)
		}
		raw, err := base64.StdEncoding.DecodeString(value)
		if err != nil {
			t.Fatalf("output %s: %v", name, err)
		}
		var got result
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("output %s: %v", name, err)
		}
		want := result{Version: 1, Status: res.Status, MaxScore: res.Points, Tests: []test{{
			Name: fmt.Sprintf("%d. %s", res.Exercise.Number, res.Exercise.Title.In(labs.DefaultLanguage)), Status: res.Status, Score: res.Score,
		}}}
		if res.Status != checker.StatusPass {
			want.Tests[0].Message = res.Reason
		}
		if got.Version != want.Version || got.Status != want.Status || got.MaxScore != want.MaxScore || len(got.Tests) != 1 || got.Tests[0] != want.Tests[0] {
			t.Errorf("output %s = %+v, want %+v", name, got, want)
		}
	}
}
