package cmd

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/operator-lab/lab/internal/classroom"
	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/labs/workspace"
)

// workflow is the part of a GitHub Actions workflow the test reads.
type workflow struct {
	Jobs map[string]struct {
		Steps []struct {
			Name            string            `json:"name"`
			ID              string            `json:"id"`
			Uses            string            `json:"uses"`
			Run             string            `json:"run"`
			ContinueOnError bool              `json:"continue-on-error"`
			Env             map[string]string `json:"env"`
			With            map[string]string `json:"with"`
		} `json:"steps"`
	} `json:"jobs"`
}

// TestClassroomWorkflowGradesAPush: `lab classroom init` writes a workflow
// whose steps, run here as the CI service would run them (lab already
// installed, on the real control plane), report each exercise's score to
// GitHub Classroom's grading reporter the way it reads them: the passed
// exercises earn the points classroom.yaml gives them, the others none.
func TestClassroomWorkflowGradesAPush(t *testing.T) {
	t.Parallel()
	lab := mustLab(t, "3.1")
	dir := filepath.Join(t.TempDir(), "ws")
	mustRun(t, "init", "3.1", "--dir", dir)
	for _, id := range []string{"results", "reads"} {
		mustRun(t, "solution", "3.1", id, "--dir", dir, "--force", "--apply")
	}
	out := mustRun(t, "classroom", "init", "--dir", dir)
	for _, f := range []string{workspace.ClassroomFile, classroom.WorkflowPath} {
		if !strings.Contains(out, "wrote "+f) {
			t.Errorf("classroom init does not say it wrote %s:\n%s", f, out)
		}
	}
	// The teacher weighs one exercise otherwise.
	points := filepath.Join(dir, workspace.ClassroomFile)
	edited := strings.Replace(readFile(t, points), "  reads: 10\n", "  reads: 25\n", 1)
	if err := os.WriteFile(points, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if again := mustRun(t, "classroom", "init", "--dir", dir); !strings.Contains(again, "kept  "+workspace.ClassroomFile) || readFile(t, points) != edited {
		t.Errorf("a second classroom init did not keep the teacher's points:\n%s", again)
	}

	var wf workflow
	if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join(dir, classroom.WorkflowPath))), &wf); err != nil {
		t.Fatalf("the workflow is not the YAML GitHub reads: %v", err)
	}
	if len(wf.Jobs) != 1 {
		t.Fatalf("%d jobs, want 1", len(wf.Jobs))
	}
	var steps = wf.Jobs["run-autograding-tests"].Steps
	if len(steps) == 0 {
		t.Fatal("no steps in job run-autograding-tests")
	}

	// The CI service's part: lab on PATH (the test's build stands for the
	// `go install` step), each run step in the workspace, outputs in
	// $GITHUB_OUTPUT.
	bin, err := labtest.Binary()
	if err != nil {
		t.Fatal(err)
	}
	outputs := filepath.Join(t.TempDir(), "github_output")
	if err := os.WriteFile(outputs, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"), "GITHUB_OUTPUT="+outputs)
	var reporterEnv map[string]string
	var runners []string
	for _, s := range steps {
		switch {
		case s.Uses == "classroom-resources/autograding-grading-reporter@v1":
			reporterEnv, runners = s.Env, strings.Split(s.With["runners"], ",")
		case s.Run == "" || strings.HasPrefix(s.Run, "go install "+classroom.Module+"@"):
		default:
			c := exec.Command("bash", "-eo", "pipefail", "-c", s.Run)
			c.Dir, c.Env = dir, env
			said, err := c.CombinedOutput()
			if err != nil && !s.ContinueOnError {
				t.Fatalf("step %q (%s): %v\n%s", s.Name, s.Run, err, said)
			}
			t.Logf("step %q: %v\n%s", s.Name, err, said)
		}
	}
	ids := make([]string, len(lab.Exercises))
	for i, e := range lab.Exercises {
		ids[i] = e.ID
	}
	if !slices.Equal(runners, ids) {
		t.Fatalf("the reporter's runners are %v, want the exercises %v", runners, ids)
	}

	// The reporter's part: <RUNNER>_RESULTS, from the step outputs the
	// expressions name, is base64 of a result; scores add up.
	given := map[string]string{}
	for _, line := range strings.Split(readFile(t, outputs), "\n") {
		if name, value, ok := strings.Cut(line, "="); ok {
			given[name] = value
		}
	}
	expr := regexp.MustCompile(`^\$\{\{ steps\.([a-z]+)\.outputs\.([a-z]+) \}\}$`)
	type result struct {
		Status   string `json:"status"`
		MaxScore int    `json:"max_score"`
		Tests    []struct {
			Status string `json:"status"`
			Score  int    `json:"score"`
		} `json:"tests"`
	}
	earned, possible := 0, 0
	wantPoints := map[string]int{"manager": 10, "basics": 10, "results": 10, "reads": 25}
	for _, id := range runners {
		m := expr.FindStringSubmatch(reporterEnv[strings.ToUpper(id)+"_RESULTS"])
		if m == nil || m[1] != classroom.GradeStepID {
			t.Fatalf("the reporter's %s_RESULTS is %q, not an output of step %s", strings.ToUpper(id), reporterEnv[strings.ToUpper(id)+"_RESULTS"], classroom.GradeStepID)
		}
		raw, err := base64.StdEncoding.DecodeString(given[m[2]])
		if err != nil {
			t.Fatalf("output %s is not base64: %v (%q)", m[2], err, given[m[2]])
		}
		var r result
		if err := json.Unmarshal(raw, &r); err != nil || len(r.Tests) != 1 {
			t.Fatalf("output %s is not a result of one test: %v\n%s", m[2], err, raw)
		}
		wantStatus, wantScore := "fail", 0
		if id == "results" || id == "reads" {
			wantStatus, wantScore = "pass", wantPoints[id]
		}
		if r.Status != wantStatus || r.Tests[0].Status != wantStatus || r.MaxScore != wantPoints[id] || r.Tests[0].Score != wantScore {
			t.Errorf("%s: %s, %d of %d points; want %s, %d of %d", id, r.Status, r.Tests[0].Score, r.MaxScore, wantStatus, wantScore, wantPoints[id])
		}
		earned, possible = earned+r.Tests[0].Score, possible+r.MaxScore
	}
	if earned != 35 || possible != 55 {
		t.Errorf("the reporter would say %d/%d points, want 35/55", earned, possible)
	}
	// The check step's other reports, with the same score.
	if junit := readFile(t, filepath.Join(dir, "junit.xml")); !strings.Contains(junit, `<property name="score" value="35">`) || !strings.Contains(junit, `<property name="points" value="55">`) {
		t.Errorf("junit.xml does not carry the score 35 of 55:\n%s", junit)
	}
	var results struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "results.json"))), &results); err != nil || results.Version != 3 {
		t.Errorf("results.json is not Exercism's v3: %v", err)
	}
}
