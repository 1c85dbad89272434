// Package classroom grades a workspace in a class's CI: it writes the
// GitHub Actions workflow `lab classroom init` puts into a workspace, and
// the per-exercise results that workflow hands to GitHub Classroom's
// grading reporter (classroom-resources/autograding-grading-reporter).
//
// The reporter reads one result per "runner" from the environment variable
// <RUNNER>_RESULTS: base64 of a JSON object with a status, a max_score and
// tests with a score each; it adds up the scores and max scores of every
// runner. Each exercise is one runner here, worth its points.
package classroom

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/internal/buildinfo"
	"github.com/operator-lab/lab/labs"
)

// WorkflowPath is where, in the workspace, the GitHub workflow goes: the
// path GitHub Classroom looks for.
const WorkflowPath = ".github/workflows/classroom.yml"

// GradeStepID is the workflow step that runs lab check; its outputs are
// the exercises' results.
const GradeStepID = "lab"

// Module is what the workflow installs lab from.
const Module = "github.com/operator-lab/lab"

// envtestStore is where `lab setup` keeps the control-plane binaries on a
// Linux runner (setup-envtest's store): what the workflow caches.
const envtestStore = "~/.local/share/kubebuilder-envtest"

// reporterAction is GitHub Classroom's grading reporter.
const reporterAction = "classroom-resources/autograding-grading-reporter@v1"

// result is one runner's result as the reporter reads it.
type result struct {
	Version  int    `json:"version"`
	Status   string `json:"status"`
	MaxScore int    `json:"max_score"`
	Tests    []test `json:"tests"`
}

type test struct {
	Name    string `json:"name"`
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
	Score   int    `json:"score"`
}

// resultOf is an exercise's result: one test, the exercise, that earns
// all its points when it passed.
func resultOf(r *checker.Result) result {
	e := r.Exercise
	t := test{
		Name:   fmt.Sprintf("%d. %s", e.Number, e.Title.In(labs.DefaultLanguage)),
		Status: r.Status, Score: r.Score,
	}
	if r.Status != checker.StatusPass {
		t.Message = r.Reason
	}
	return result{Version: 1, Status: r.Status, MaxScore: r.Points, Tests: []test{t}}
}

// WriteOutputs writes the report's results as GitHub Actions step outputs
// (`name=value` lines, for $GITHUB_OUTPUT): per exercise, its id and the
// base64 of its result, which the workflow passes on to the reporter.
func WriteOutputs(w io.Writer, report *checker.Report) error {
	var b strings.Builder
	for _, r := range report.Results {
		raw, err := json.Marshal(resultOf(r))
		if err != nil {
			return fmt.Errorf("classroom result of %s: %w", r.Exercise.ID, err)
		}
		fmt.Fprintf(&b, "%s=%s\n", r.Exercise.ID, base64.StdEncoding.EncodeToString(raw))
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write the classroom outputs: %w", err)
	}
	return nil
}

// InstallVersion is the version of lab the workflow installs: this
// build's when it is a release, else the latest.
func InstallVersion(version string) string {
	if regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`).MatchString(version) {
		return version
	}
	return "latest"
}

// Workflow is the GitHub Actions workflow that grades every push of a
// workspace of lab: it installs lab at version, provisions the control
// plane (cached between runs), runs lab check, and reports each
// exercise's score to GitHub Classroom.
func Workflow(lab *labs.Lab, version string) []byte {
	var runners, env strings.Builder
	for i, e := range lab.Exercises {
		if i > 0 {
			runners.WriteString(",")
		}
		runners.WriteString(e.ID)
		fmt.Fprintf(&env, "          %s_RESULTS: \"${{ steps.%s.outputs.%s }}\"\n", strings.ToUpper(e.ID), GradeStepID, e.ID)
	}
	install := InstallVersion(version)
	return fmt.Appendf(nil, `# Written by lab classroom init. It grades every push of this workspace of
# lab %[1]s with lab check, and reports a score per exercise to GitHub
# Classroom: what each exercise is worth is in classroom.yaml.
name: Autograding Tests
on: [push, repository_dispatch, workflow_dispatch]
permissions:
  checks: write
  actions: read
  contents: read
jobs:
  run-autograding-tests:
    runs-on: ubuntu-latest
    if: github.actor != 'github-classroom[bot]'
    timeout-minutes: 30
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-go@v5
        with:
          go-version-file: go.mod
      - name: Cache the control-plane binaries
        uses: actions/cache@v4
        with:
          path: %[2]s
          key: lab-control-plane-${{ runner.os }}-kubernetes-%[3]s
      - name: Install lab
        run: go install %[4]s@%[5]s
      - name: Provision the control plane
        run: lab setup
      - name: Check
        id: %[6]s
        # A failing exercise fails this step; the score is reported all the same.
        continue-on-error: true
        run: lab check --json --junit junit.xml --classroom-output "$GITHUB_OUTPUT" > results.json
      - name: Report the score
        if: always()
        uses: %[7]s
        env:
%[8]s        with:
          runners: %[9]s
`, lab.ID, envtestStore, buildinfo.KubernetesVersion, Module, install, GradeStepID, reporterAction, env.String(), runners.String())
}
