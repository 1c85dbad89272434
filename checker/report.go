package checker

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/operator-lab/lab/internal/l10n"
	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/workspace"
)

// HumanOptions tune the human report.
type HumanOptions struct {
	Lang string
	// Progress supplies how many hints were already shown: beside a
	// failure the report reminds of the last one (only `lab hint` shows a
	// new one), or shows the first, which it records there as shown for
	// the caller to save; nil offers the first.
	Progress *workspace.Progress
	// Verbose shows the output of passing exercises' checks too.
	Verbose bool
}

// WriteHuman prints the report for a person at a terminal.
func (r *Report) WriteHuman(w io.Writer, opts HumanOptions) error {
	say := l10n.For(opts.Lang)
	var b strings.Builder
	fmt.Fprintf(&b, "lab %s — %s\n\n", r.Lab.ID, r.Lab.Title.In(opts.Lang))
	passed := 0
	for _, res := range r.Results {
		e := res.Exercise
		mark := map[string]string{StatusPass: "✓", StatusFail: "✗", StatusError: "!"}[res.Status]
		word := map[string]string{StatusPass: say.TextAs("grade", "passed"), StatusFail: say.TextAs("grade", "failed"), StatusError: say.TextAs("grade", "error")}[res.Status]
		fmt.Fprintf(&b, "%s %d. %-28s %s", mark, e.Number, e.Title.In(opts.Lang), word)
		if res.Duration > 0 {
			fmt.Fprintf(&b, " (%s)", res.Duration.Round(100*time.Millisecond))
		}
		b.WriteString(say.Textf(" · %d/%d points", res.Score, res.Points))
		b.WriteString("\n")
		if res.Status == StatusPass {
			passed++
			continue
		}
		fmt.Fprintf(&b, "    %s\n", res.Reason)
		said := false // the reason ends with the first failure's message: once is enough
		for _, line := range strings.Split(res.Output, "\n") {
			if msg := strings.TrimSpace(line); !said && msg != "" && strings.HasSuffix(res.Reason, msg) {
				said = true
				continue
			}
			if res.Output != "" {
				fmt.Fprintf(&b, "    │ %s\n", line)
			}
		}
		if !res.Ungraded { // where the environment failed, not the code, no hint
			b.WriteString(hintLine(e, opts))
		}
		b.WriteString("\n")
	}
	b.WriteString(say.Textf("\n%d of %d passed in %s.\n", passed, len(r.Results), r.Duration.Round(100*time.Millisecond)))
	earned, possible := r.Score()
	b.WriteString(say.Textf("Score: %d of %d points.\n", earned, possible))
	if r.BuildDir != "" {
		b.WriteString(say.Textf("Build folder kept at %s\n", r.BuildDir))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// hintLine is the hint printed beside a failure, "" when the exercise
// has none.
func hintLine(e *labs.Exercise, opts HumanOptions) string {
	hint, n, total := checkHint(e, opts)
	if hint == "" {
		return ""
	}
	say := l10n.For(opts.Lang)
	if n == total {
		return say.Textf("    hint %d/%d: %s\n", n, total, hint)
	}
	return say.Textf("    hint %d/%d (lab hint: the next one): %s\n", n, total, hint)
}

// checkHint is the hint printed beside a failure (workspace's CheckHint),
// recorded as shown in opts.Progress; n counts from 1.
func checkHint(e *labs.Exercise, opts HumanOptions) (hint string, n, total int) {
	hints := e.Hints.In(opts.Lang)
	if len(hints) == 0 {
		return "", 0, 0
	}
	if opts.Progress == nil {
		return hints[0], 1, len(hints)
	}
	p := opts.Progress.Exercise(e.ID)
	i := p.CheckHint(len(hints))
	p.ShowHint(i)
	return hints[i], i + 1, len(hints)
}

// ExercismResults is the Exercism test-runner results.json, version 3.
type ExercismResults struct {
	Version int            `json:"version"`
	Status  string         `json:"status"`
	Message string         `json:"message,omitempty"`
	Tests   []ExercismTest `json:"tests"`
}

// ExercismTest is one test in results.json.
type ExercismTest struct {
	Name    string `json:"name"`
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
	Output  string `json:"output,omitempty"`
	TaskID  int    `json:"task_id"`
}

// Exercism converts the report to results.json: one test per check, tasks
// numbered like the exercises. An exercise whose checks could not run is one
// test with status error.
func (r *Report) Exercism() ExercismResults {
	out := ExercismResults{Version: 3, Status: StatusPass, Tests: []ExercismTest{}}
	ran := false
	for _, res := range r.Results {
		leaves := leafTests(res.Tests)
		if res.Status == StatusError || len(leaves) == 0 {
			out.Tests = append(out.Tests, ExercismTest{
				Name: res.Exercise.ID + ": " + res.Exercise.Title.In(labs.DefaultLanguage), Status: res.Status,
				Message: res.Reason, Output: res.Output, TaskID: res.Exercise.Number,
			})
		} else {
			ran = true
			for _, t := range leaves {
				msg := t.Message
				if t.Status == "skip" {
					msg = "skipped: " + msg
				}
				if res.Status == StatusFail && t.Status != StatusPass && msg == "" {
					msg = res.Reason
				}
				out.Tests = append(out.Tests, ExercismTest{
					Name: res.Exercise.ID + ": " + readableTestName(t.Name), Status: exercismStatus(t.Status),
					Message: msg, Output: outputIfFailed(t), TaskID: res.Exercise.Number,
				})
			}
			told := slices.ContainsFunc(failedLeaves(res.Tests), func(t TestResult) bool {
				return t.Message != "" && strings.HasSuffix(res.Reason, t.Message)
			})
			if res.Status == StatusFail && !told {
				// A failure no single check's message says (a data race, even
				// with checks failing besides): say so once.
				out.Tests = append(out.Tests, ExercismTest{
					Name: res.Exercise.ID + ": whole exercise", Status: StatusFail,
					Message: res.Reason, Output: res.Output, TaskID: res.Exercise.Number,
				})
			}
		}
		if res.Status != StatusPass && out.Status == StatusPass {
			out.Status = StatusFail
		}
	}
	if !ran && out.Status != StatusPass && len(r.Results) > 0 {
		out.Status = StatusError
		out.Message = r.Results[0].Reason
	}
	return out
}

func outputIfFailed(t TestResult) string {
	if t.Status == StatusPass {
		return ""
	}
	return t.Output
}

func exercismStatus(s string) string {
	if s == "skip" {
		// A check skips only when what it needs failed earlier: it did not pass.
		return StatusFail
	}
	return s
}

// leafTests drops tests that have subtests: their subtests are the checks.
func leafTests(tests []TestResult) []TestResult {
	var out []TestResult
	for _, t := range tests {
		parent := false
		for _, other := range tests {
			if strings.HasPrefix(other.Name, t.Name+"/") {
				parent = true
				break
			}
		}
		if !parent || (t.Status == StatusFail && t.Message != "") {
			out = append(out, t)
		}
	}
	return out
}

// WriteExercism writes results.json.
func (r *Report) WriteExercism(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r.Exercism()); err != nil {
		return fmt.Errorf("write results.json: %w", err)
	}
	return nil
}

type junitSuites struct {
	XMLName xml.Name `xml:"testsuites"`
	Name    string   `xml:"name,attr"`
	junitTotals
	Suites []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name string `xml:"name,attr"`
	junitTotals
	Cases []junitCase `xml:"testcase"`
}

// junitTotals are what a suite and the whole say of their cases.
type junitTotals struct {
	Tests      int              `xml:"tests,attr"`
	Failures   int              `xml:"failures,attr"`
	Errors     int              `xml:"errors,attr"`
	Time       float64          `xml:"time,attr"`
	Properties *junitProperties `xml:"properties,omitempty"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *struct{}     `xml:"skipped,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

type junitProperties struct {
	Property []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value int    `xml:"value,attr"`
}

// scoreProperties are the JUnit properties of a score: "score", what was
// earned, and "points", what it was worth.
func scoreProperties(earned, possible int) *junitProperties {
	return &junitProperties{Property: []junitProperty{{Name: "score", Value: earned}, {Name: "points", Value: possible}}}
}

// WriteJUnit writes JUnit XML: one suite per exercise, one case per check,
// with the score as properties of each suite and of the whole.
func (r *Report) WriteJUnit(w io.Writer) error {
	suites := junitSuites{Name: "lab " + r.Lab.ID, junitTotals: junitTotals{Time: r.Duration.Seconds()}}
	for _, test := range r.Exercism().Tests {
		var e *labs.Exercise
		for _, res := range r.Results {
			if res.Exercise.Number == test.TaskID {
				e = res.Exercise
			}
		}
		name := fmt.Sprintf("%s/%s", r.Lab.ID, e.ID)
		if len(suites.Suites) == 0 || suites.Suites[len(suites.Suites)-1].Name != name {
			suites.Suites = append(suites.Suites, junitSuite{Name: name})
		}
		s := &suites.Suites[len(suites.Suites)-1]
		c := junitCase{Name: test.Name, ClassName: name}
		switch test.Status {
		case StatusFail:
			c.Failure = &junitProblem{Message: test.Message, Text: test.Output}
			s.Failures++
		case StatusError:
			c.Error = &junitProblem{Message: test.Message, Text: test.Output}
			s.Errors++
		}
		s.Cases = append(s.Cases, c)
		s.Tests++
	}
	for _, res := range r.Results {
		for i := range suites.Suites {
			if suites.Suites[i].Name == r.Lab.ID+"/"+res.Exercise.ID {
				suites.Suites[i].Time = res.Duration.Seconds()
				suites.Suites[i].Properties = scoreProperties(res.Score, res.Points)
			}
		}
	}
	suites.Properties = scoreProperties(r.Score())
	for _, s := range suites.Suites {
		suites.Tests += s.Tests
		suites.Failures += s.Failures
		suites.Errors += s.Errors
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("write JUnit XML: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(suites); err != nil {
		return fmt.Errorf("write JUnit XML: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// Record stores the report's grades in the workspace's progress. An
// exercise left ungraded (Result.Ungraded) keeps its previous grade.
func (r *Report) Record(p *workspace.Progress) {
	for _, res := range r.Results {
		if !res.Ungraded {
			p.Record(res.Exercise.ID, res.Status, r.Started)
		}
	}
}
