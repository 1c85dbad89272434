package checker_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/checker/checkertest"
	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/labs"
)

// A variant is one learner submission for one exercise: the reference
// solution with edits, or with files added, that a learner could have
// written, and the verdict the grader must give it. The variants of an
// exercise live in testdata/variants/LAB/EXERCISE.txtar, out of the
// learner's view, as sections named after the variant:
//
//	-- NAME/want --          the verdict ("pass", "fail" or "error"), and on
//	                         the next lines text the reason must contain
//	-- NAME/old FILE --      text of the solution's FILE to replace…
//	-- NAME/new FILE --      …with this (pairs apply in order; txtar ends
//	                         every section with a newline, which an old
//	                         and a new section do not count)
//	-- NAME/add FILE --      a file of the learner's, added to the workspace
//
// Wrong variants are named w-…, correct ones c-….
type variant struct {
	lab, exercise, name string
	want                string   // checker.StatusPass, StatusFail, StatusError
	reasons             []string // each must be in the result's reason
	edits               []edit
	added               map[string]string
}

type edit struct{ file, old, new string }

// loadVariants reads every variant of a lab.
func loadVariants(t *testing.T, lab *labs.Lab) []*variant {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "variants", lab.ID, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var out []*variant
	for _, path := range files {
		exercise := strings.TrimSuffix(filepath.Base(path), ".txtar")
		if _, err := lab.Exercise(exercise); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		a, err := txtar.ParseFile(path)
		if err != nil {
			t.Fatal(err)
		}
		vs, err := parseVariants(lab.ID, exercise, a)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, vs...)
	}
	return out
}

func parseVariants(lab, exercise string, a *txtar.Archive) ([]*variant, error) {
	byName := map[string]*variant{}
	var order []*variant
	var pending *edit // an old section waiting for its new
	for _, f := range a.Files {
		name, section, ok := strings.Cut(f.Name, "/")
		if !ok {
			return nil, fmt.Errorf("section %q: want NAME/want, NAME/old FILE, NAME/new FILE or NAME/add FILE", f.Name)
		}
		v := byName[name]
		if v == nil {
			v = &variant{lab: lab, exercise: exercise, name: name, added: map[string]string{}}
			byName[name] = v
			order = append(order, v)
		}
		kind, file, _ := strings.Cut(section, " ")
		switch kind {
		case "want":
			lines := strings.Split(strings.TrimSpace(string(f.Data)), "\n")
			v.want = strings.TrimSpace(lines[0])
			for _, r := range lines[1:] {
				if r = strings.TrimSpace(r); r != "" {
					v.reasons = append(v.reasons, r)
				}
			}
		case "old":
			pending = &edit{file: file, old: strings.TrimSuffix(string(f.Data), "\n")}
		case "new":
			if pending == nil || pending.file != file {
				return nil, fmt.Errorf("%s: a new section for %s without its old section", name, file)
			}
			pending.new = strings.TrimSuffix(string(f.Data), "\n")
			v.edits = append(v.edits, *pending)
			pending = nil
		case "add":
			v.added[file] = string(f.Data)
		default:
			return nil, fmt.Errorf("section %q: unknown kind %q", f.Name, kind)
		}
	}
	if pending != nil {
		return nil, fmt.Errorf("an old section for %s without its new section", pending.file)
	}
	for _, v := range order {
		switch {
		case !slices.Contains([]string{checker.StatusPass, checker.StatusFail, checker.StatusError}, v.want):
			return nil, fmt.Errorf("variant %s: want %q, not pass, fail or error", v.name, v.want)
		case strings.HasPrefix(v.name, "c-") != (v.want == checker.StatusPass):
			return nil, fmt.Errorf("variant %s: a c-… variant must pass and a w-… one must not", v.name)
		case len(v.edits) == 0 && len(v.added) == 0:
			return nil, fmt.Errorf("variant %s changes nothing", v.name)
		}
	}
	return order, nil
}

// files returns the workspace files the variant replaces or adds.
func (v *variant) files(t *testing.T, lab *labs.Lab) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, e := range v.edits {
		text, ok := out[e.file]
		if !ok {
			ex := lab.ExerciseForFile(e.file)
			if ex == nil {
				t.Fatalf("variant %s/%s: %s is no exercise file", v.exercise, v.name, e.file)
			}
			b, err := ex.Solution(e.file)
			if err != nil {
				t.Fatal(err)
			}
			text = string(b)
		}
		if !strings.Contains(text, e.old) {
			t.Fatalf("variant %s/%s: the solution's %s has no\n%s", v.exercise, v.name, e.file, e.old)
		}
		out[e.file] = strings.Replace(text, e.old, e.new, 1)
	}
	for file, text := range v.added {
		out[file] = text
	}
	return out
}

// TestVariants grades every variant and fails for a wrong one that passes,
// a correct one that does not, or a reason that does not say what it must.
// The variants are checked in rounds: a round's workspace holds one
// variant of each exercise (the solution elsewhere), so one build and one
// run grade as many variants as there are exercises.
func TestVariants(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every variant: skipped with -short")
	}
	all, err := labs.All()
	if err != nil {
		t.Fatal(err)
	}
	only, err := regexp.Compile(*variantsMatching)
	if err != nil {
		t.Fatalf("-variants: %v", err)
	}
	for _, lab := range all {
		variants := slices.DeleteFunc(loadVariants(t, lab), func(v *variant) bool {
			return !only.MatchString(v.lab + "/" + v.exercise + "/" + v.name)
		})
		if len(variants) == 0 {
			continue
		}
		t.Run(lab.ID, func(t *testing.T) {
			t.Parallel()
			kc := kubeconfig(t)
			rs := rounds(lab, variants)
			// The workspaces are made here, in the test's goroutine; the
			// checks run several at once, as most of a failing check's time
			// is spent waiting on the control plane, not on the CPU.
			type run struct {
				dir       string
				exercises []*labs.Exercise
				before    labtest.Snapshot
				report    *checker.Report
				err       error
				took      time.Duration
			}
			runs := make([]*run, len(rs))
			for i, round := range rs {
				overrides := map[string]string{}
				r := &run{}
				for _, v := range round {
					for file, text := range v.files(t, lab) {
						overrides[file] = text
					}
					e, err := lab.Exercise(v.exercise)
					if err != nil {
						t.Fatal(err)
					}
					r.exercises = append(r.exercises, e)
				}
				r.dir = checkertest.Workspace(t, lab, true, overrides)
				r.before = labtest.TakeSnapshot(t, r.dir)
				runs[i] = r
			}
			var wg sync.WaitGroup
			slots := make(chan struct{}, variantChecksAtOnce)
			for _, r := range runs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					slots <- struct{}{}
					defer func() { <-slots }()
					// Each round has its own deadline, counted from when it
					// starts: a slow machine makes the suite longer, never a
					// round that waited its turn fail.
					ctx, cancel := context.WithTimeout(context.Background(), variantRoundTimeout)
					defer cancel()
					start := time.Now()
					r.report, r.err = checker.Check(ctx, checker.Options{Lab: lab, Dir: r.dir, Exercises: r.exercises, Kubeconfig: kc})
					r.took = time.Since(start)
				}()
			}
			wg.Wait()
			for i, round := range rs {
				r := runs[i]
				t.Logf("round %d: %d variants checked in %s", i+1, len(round), r.took.Round(time.Second))
				if r.err != nil {
					t.Errorf("round %d: check: %v", i+1, r.err)
					continue
				}
				if changes := r.before.Changes(labtest.TakeSnapshot(t, r.dir)); len(changes) > 0 {
					t.Errorf("round %d: the check changed the workspace: %v", i+1, changes)
				}
				for _, v := range round {
					res := result(t, r.report, v.exercise)
					where := fmt.Sprintf("round %d, %s/%s", i+1, v.exercise, v.name)
					if res.Status != v.want {
						t.Errorf("%s: %s (%s), want %s", where, res.Status, res.Reason, v.want)
						continue
					}
					for _, reason := range v.reasons {
						if !strings.Contains(res.Reason, reason) {
							t.Errorf("%s: reason %q does not say %q", where, res.Reason, reason)
						}
					}
				}
			}
		})
	}
}

// variantsMatching narrows TestVariants while one exercise's checks are
// being worked on: go test ./checker -run TestVariants -variants '4.4/together/'.
var variantsMatching = flag.String("variants", "", "check only the variants whose LAB/EXERCISE/NAME matches this regular expression")

// variantChecksAtOnce is how many variant rounds of a lab are checked at
// the same time: two, to leave the CPU to the rest of make test.
const variantChecksAtOnce = 2

// variantRoundTimeout bounds one round's check: far above what a round
// takes (under a minute here), so only a hung check reaches it.
const variantRoundTimeout = 8 * time.Minute

// rounds deals the variants out so that no round holds two of one
// exercise, nor variants of two exercises one of which imports the other's
// package (together uses breaker, backoff and idempotency): a correct
// variant of together is graded against the solutions of what it uses, and
// a wrong variant of breaker fails for its own mistake only.
func rounds(lab *labs.Lab, variants []*variant) [][]*variant {
	uses := exerciseImports(lab)
	related := func(a, b string) bool { return a == b || uses[a][b] || uses[b][a] }
	var out [][]*variant
	next := map[string]int{} // exercise → the first round its next variant may go to
	for _, v := range variants {
		i := next[v.exercise]
		for ; i < len(out); i++ {
			if !slices.ContainsFunc(out[i], func(w *variant) bool { return related(v.exercise, w.exercise) }) {
				break
			}
		}
		if i == len(out) {
			out = append(out, nil)
		}
		out[i] = append(out[i], v)
		next[v.exercise] = i + 1
	}
	return out
}

// exerciseImports says, for each exercise, which other exercises' packages
// its solution imports.
func exerciseImports(lab *labs.Lab) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, e := range lab.Exercises {
		out[e.ID] = map[string]bool{}
		for _, file := range e.Files {
			src, err := e.Solution(file)
			if err != nil {
				continue
			}
			for _, other := range lab.Exercises {
				if other != e && strings.Contains(string(src), `"`+lab.Module+"/"+other.Package+`"`) {
					out[e.ID][other.ID] = true
				}
			}
		}
	}
	return out
}

// TestRoundsKeepRelatedExercisesApart: no round holds variants of two
// exercises where one uses the other, and every variant is in one round.
func TestRoundsKeepRelatedExercisesApart(t *testing.T) {
	lab := checkertest.Lab(t, "4.4")
	uses := exerciseImports(lab)
	if !uses["together"]["breaker"] {
		t.Fatalf("exerciseImports = %v, want together to use breaker", uses)
	}
	variants := loadVariants(t, lab)
	seen := 0
	for i, round := range rounds(lab, variants) {
		seen += len(round)
		for _, a := range round {
			for _, b := range round {
				if a != b && (a.exercise == b.exercise || uses[a.exercise][b.exercise]) {
					t.Errorf("round %d holds %s/%s and %s/%s", i+1, a.exercise, a.name, b.exercise, b.name)
				}
			}
		}
	}
	if seen != len(variants) {
		t.Errorf("rounds hold %d variants, want %d", seen, len(variants))
	}
}

// TestVariantFilesParse keeps the variant files well formed without a
// control plane: every section parses and every edit applies.
func TestVariantFilesParse(t *testing.T) {
	all, err := labs.All()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join("testdata", "variants"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !slices.ContainsFunc(all, func(l *labs.Lab) bool { return l.ID == e.Name() }) {
			t.Errorf("testdata/variants/%s: no such lab", e.Name())
		}
	}
	for _, lab := range all {
		for _, v := range loadVariants(t, lab) {
			v.files(t, lab)
		}
	}
}
