package checker_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
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
func (v *variant) files(lab *labs.Lab) (map[string]string, error) {
	out := map[string]string{}
	for _, e := range v.edits {
		text, ok := out[e.file]
		if !ok {
			ex := lab.ExerciseForFile(e.file)
			if ex == nil {
				return nil, fmt.Errorf("variant %s/%s: %s is no exercise file", v.exercise, v.name, e.file)
			}
			b, err := ex.Solution(e.file)
			if err != nil {
				return nil, err
			}
			text = string(b)
		}
		if !strings.Contains(text, e.old) {
			return nil, fmt.Errorf("variant %s/%s: the solution's %s has no\n%s", v.exercise, v.name, e.file, e.old)
		}
		out[e.file] = strings.Replace(text, e.old, e.new, 1)
	}
	for file, text := range v.added {
		out[file] = text
	}
	return out, nil
}

// roundFiles are the files a round's variants write over the solution,
// and the exercises it checks.
func roundFiles(lab *labs.Lab, round []*variant) (map[string]string, []*labs.Exercise, error) {
	files := map[string]string{}
	var exercises []*labs.Exercise
	for _, v := range round {
		vf, err := v.files(lab)
		if err != nil {
			return nil, nil, err
		}
		maps.Copy(files, vf)
		e, err := lab.Exercise(v.exercise)
		if err != nil {
			return nil, nil, err
		}
		exercises = append(exercises, e)
	}
	return files, exercises, nil
}

// A slot is a solved workspace the variant rounds take turns in.
type slot struct{ dir string }

func newSlot(t *testing.T, lab *labs.Lab) *slot {
	return &slot{dir: checkertest.Workspace(t, lab, true, nil)}
}

// write puts files (slash paths) into the slot and returns what puts the
// slot back as it was: the files it had, and none it had not.
func (s *slot) write(files map[string]string) (restore func() error, err error) {
	type was struct {
		path    string
		content []byte // nil: did not exist
	}
	var undo []was
	var made []string // the topmost folders write created
	restore = func() error {
		var errs []error
		for _, w := range slices.Backward(undo) {
			if w.content == nil {
				errs = append(errs, os.Remove(w.path))
			} else {
				errs = append(errs, os.WriteFile(w.path, w.content, 0o644))
			}
		}
		for _, d := range made {
			errs = append(errs, os.RemoveAll(d))
		}
		return errors.Join(errs...)
	}
	for rel, content := range files {
		p := filepath.Join(s.dir, filepath.FromSlash(rel))
		old, err := os.ReadFile(p)
		switch {
		case err == nil:
		case errors.Is(err, fs.ErrNotExist):
			old = nil
			if top := topMissing(s.dir, filepath.Dir(p)); top != "" {
				made = append(made, top)
			}
		default:
			return nil, errors.Join(err, restore())
		}
		undo = append(undo, was{p, old})
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, errors.Join(err, restore())
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return nil, errors.Join(err, restore())
		}
	}
	return restore, nil
}

// topMissing returns the outermost folder of dir, below root, that does
// not exist yet ("" when dir exists).
func topMissing(root, dir string) string {
	top := ""
	for d := dir; d != root && len(d) > len(root); d = filepath.Dir(d) {
		if _, err := os.Stat(d); err != nil {
			top = d
		}
	}
	return top
}

// TestVariants grades every variant and fails for a wrong one that passes,
// a correct one that does not, or a reason that does not say what it must.
// The variants are checked in rounds: a round's workspace holds one
// variant of each exercise (the solution elsewhere), so one check grades
// as many variants as there are exercises. Most variants are linked into
// one test binary per exercise first (checker.BuildVariantBinaries), so a
// round runs binaries and links none; a sample of them, one wrong and one
// correct variant of each exercise, is graded again the way a learner's
// check builds it, and both verdicts must be the same.
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
			return !only.MatchString(v.key())
		})
		if len(variants) == 0 {
			continue
		}
		t.Run(lab.ID, func(t *testing.T) {
			t.Parallel()
			kc := kubeconfig(t)
			bins := variantBinaries(t, lab, variants)
			sample := sampleOf(variants, bins)
			var rs []round
			for _, r := range rounds(lab, variants) {
				rs = append(rs, round{variants: r, shared: true})
			}
			for _, r := range rounds(lab, sample) {
				rs = append(rs, round{variants: r})
			}
			// The rounds take turns in a few workspaces (slots) that stay
			// where they are: a check's private build folder is keyed by
			// the workspace's path, so Go's build cache and the kept test
			// binaries carry over and a round compiles and links only what
			// its variants changed, as a learner's next check would. The
			// checks run several at once, as much of a check's time is
			// spent waiting on the control plane, not on the CPU.
			runs := make([]*roundRun, len(rs))
			next := make(chan int, len(rs))
			for i := range rs {
				next <- i
			}
			close(next)
			var wg sync.WaitGroup
			for range min(variantChecksAtOnce, len(rs)) {
				s := newSlot(t, lab)
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range next {
						opts := checker.Options{Lab: lab, Dir: s.dir, Kubeconfig: kc}
						if rs[i].shared {
							opts = bins.Prebuilt(opts, keysOf(rs[i].variants))
						}
						runs[i] = s.check(lab, rs[i].variants, opts)
					}
				}()
			}
			wg.Wait()
			graded := map[string]*checker.Result{} // key → its verdict from the shared binary
			for i, r := range rs {
				run := runs[i]
				t.Logf("round %d (%s): %d variants checked in %s", i+1, r.how(), len(r.variants), run.took.Round(time.Second))
				if run.err != nil {
					t.Errorf("round %d: check: %v", i+1, run.err)
					continue
				}
				if len(run.changes) > 0 {
					t.Errorf("round %d: the check changed the workspace: %v", i+1, run.changes)
				}
				for _, v := range r.variants {
					res := result(t, run.report, v.exercise)
					where := fmt.Sprintf("round %d, %s/%s", i+1, v.exercise, v.name)
					if r.shared {
						graded[v.key()] = res
					} else if shared := graded[v.key()]; shared != nil {
						if diff := sameVerdict(shared, res); diff != "" {
							t.Errorf("%s: graded from the shared binary and as a check builds it, the verdicts differ: %s", where, diff)
						}
					}
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

// A round is variants checked together, from the shared binaries (those
// that have one) or all built as a learner's check builds them.
type round struct {
	variants []*variant
	shared   bool
}

func (r round) how() string {
	if r.shared {
		return "shared binaries"
	}
	return "built as a check builds"
}

type roundRun struct {
	report *checker.Report
	err    error
	took   time.Duration
	// changes are what the check changed in the workspace.
	changes []string
}

// check writes the variants into the slot, checks their exercises with
// opts, and puts the slot back.
func (s *slot) check(lab *labs.Lab, variants []*variant, opts checker.Options) *roundRun {
	run := &roundRun{}
	files, exercises, err := roundFiles(lab, variants)
	if err != nil {
		run.err = err
		return run
	}
	restore, err := s.write(files)
	if err != nil {
		run.err = err
		return run
	}
	before, err := labtest.SnapshotOf(s.dir)
	if err != nil {
		run.err = errors.Join(err, restore())
		return run
	}
	// Each round has its own deadline, counted from when it has its turn
	// (takeCheckTurn): a slow machine makes the suite longer, never a
	// round that waited its turn fail.
	done := takeCheckTurn()
	ctx, cancel := context.WithTimeout(context.Background(), variantRoundTimeout)
	start := time.Now()
	opts.Exercises = exercises
	run.report, run.err = checker.Check(ctx, opts)
	run.took = time.Since(start)
	cancel()
	done()
	if after, err := labtest.SnapshotOf(s.dir); err == nil {
		run.changes = before.Changes(after)
	}
	if err := restore(); err != nil && run.err == nil {
		run.err = err
	}
	return run
}

func (v *variant) key() string { return v.lab + "/" + v.exercise + "/" + v.name }

func keysOf(variants []*variant) []string {
	var out []string
	for _, v := range variants {
		out = append(out, v.key())
	}
	return out
}

// variantBinaries links the variants that can share a binary, one binary
// per exercise, in a solved workspace of their own.
func variantBinaries(t *testing.T, lab *labs.Lab, variants []*variant) *checker.VariantBinaries {
	t.Helper()
	var sources []checker.VariantSource
	for _, v := range variants {
		files, err := v.files(lab)
		if err != nil {
			t.Fatal(err)
		}
		e, err := lab.Exercise(v.exercise)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, checker.VariantSource{Key: v.key(), Exercise: e, Files: files})
	}
	solved := checkertest.Workspace(t, lab, true, nil)
	done := takeCheckTurn()
	defer done()
	ctx, cancel := context.WithTimeout(context.Background(), variantRoundTimeout)
	defer cancel()
	bins, err := checker.BuildVariantBinaries(ctx, lab, solved, t.TempDir(), sources)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d of %d variants share a binary; the others are built as a check builds them:", len(variants)-len(bins.Skipped), len(variants))
	for _, key := range slices.Sorted(maps.Keys(bins.Skipped)) {
		t.Logf("  %s: %s", key, bins.Skipped[key])
	}
	return bins
}

// sampleOf is one wrong and one correct variant of each exercise, of those
// that share a binary: the ones graded both ways.
func sampleOf(variants []*variant, bins *checker.VariantBinaries) []*variant {
	var out []*variant
	taken := map[string]bool{}
	for _, v := range variants {
		kind := v.exercise + "/" + v.name[:2]
		if bins.Has(v.key()) && !taken[kind] {
			taken[kind] = true
			out = append(out, v)
		}
	}
	return out
}

// sameVerdict says how two results of one variant differ, if they do: in
// status and reason, and for a correct variant in each check's name,
// status and message. What a wrong variant's code does depends on timing
// (how many reconciles a check saw, whether one came after a deletion,
// which checks ran before a data race ended the binary), so of its reason
// only what was expected is compared, not what was seen, and its checks
// are not. The checks also pick names, counts and durations at random on
// every run, and a race report may name either line of a racy pair, so
// numbers and the random name suffixes are masked (asChosen): what is
// compared is what was checked, how it failed and where.
func sameVerdict(a, b *checker.Result) string {
	if a.Status != b.Status || expected(a.Reason) != expected(b.Reason) {
		return fmt.Sprintf("%s (%s) and %s (%s)", a.Status, a.Reason, b.Status, b.Reason)
	}
	if a.Status != checker.StatusPass {
		return ""
	}
	if len(a.Tests) != len(b.Tests) {
		return fmt.Sprintf("%d checks and %d", len(a.Tests), len(b.Tests))
	}
	for i := range a.Tests {
		ta, tb := a.Tests[i], b.Tests[i]
		if asChosen(ta.Name) != asChosen(tb.Name) || ta.Status != tb.Status || asChosen(ta.Message) != asChosen(tb.Message) {
			return fmt.Sprintf("check %s %s (%s) and %s %s (%s)", ta.Name, ta.Status, ta.Message, tb.Name, tb.Status, tb.Message)
		}
	}
	return ""
}

// expected is a reason up to what the check saw ("…: expected X, saw Y").
func expected(reason string) string {
	before, _, _ := strings.Cut(reason, ", saw ")
	return asChosen(before)
}

// asChosen masks what a check chooses anew each run: numbers and
// durations, and the five-character suffixes of the names it makes
// (checkkit.Name).
func asChosen(s string) string {
	return chosenNumber.ReplaceAllString(chosenSuffix.ReplaceAllString(s, "-#####"), "#")
}

var (
	chosenSuffix = regexp.MustCompile(`-[a-z0-9]{5}\b`)
	chosenNumber = regexp.MustCompile(`(?:[0-9]+(?:\.[0-9]+)?(?:h|ms|µs|ns|m|s)?)+`)
)

// variantsMatching narrows TestVariants while one exercise's checks are
// being worked on: go test ./checker -run TestVariants -variants '4.4/together/'.
var variantsMatching = flag.String("variants", "", "check only the variants whose LAB/EXERCISE/NAME matches this regular expression")

// variantChecksAtOnce is how many variant rounds of a lab are checked at
// the same time (each round also waits for one of the package's
// checkTurns): two, so one round builds while another runs its checks.
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
			if _, err := v.files(lab); err != nil {
				t.Error(err)
			}
		}
	}
}
