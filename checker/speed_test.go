package checker_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/checker/checkertest"
	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/labs"
)

// The speed benchmarks report, beside ns/op, "x-baseline": their time as a
// multiple of the trivial envtest test (envtestBaseline) measured in the
// same benchmark process — so the figures of two runs, or two machines,
// compare.

// trivialEnvtestTest is the baseline: what a Go developer's own loop costs
// — `go test` of a package that starts envtest and creates one ConfigMap.
const trivialEnvtestTest = `package trivial

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

func TestCreateAConfigMap(t *testing.T) {
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "trivial", Namespace: "default"}}
	if err := c.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
}
`

var (
	baselineOnce sync.Once
	baseline     time.Duration
	baselineErr  error
)

// envtestBaseline is the median of three warm runs of trivialEnvtestTest,
// measured once per benchmark process in a module with the workspace's
// go.mod (so no download is needed).
func envtestBaseline(b *testing.B) time.Duration {
	b.Helper()
	baselineOnce.Do(func() { baseline, baselineErr = measureBaseline(b) })
	if baselineErr != nil {
		b.Fatal(baselineErr)
	}
	return baseline
}

func measureBaseline(b *testing.B) (time.Duration, error) {
	dir := labtest.Workspace(b, checkertest.Lab(b, "3.1"), false, map[string]string{
		"zztrivial/trivial_test.go": trivialEnvtestTest,
	})
	bins, err := controlplane.Setup(context.Background(), controlplane.SetupOptions{})
	if err != nil {
		return 0, err
	}
	run := func() (time.Duration, error) {
		t := time.Now()
		cmd := exec.Command("go", "test", "-count=1", "./zztrivial")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "KUBEBUILDER_ASSETS="+bins.Dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("the trivial envtest test: %w\n%s", err, out)
		}
		return time.Since(t), nil
	}
	if _, err := run(); err != nil { // warm the build cache
		return 0, err
	}
	var times []time.Duration
	for range 3 {
		d, err := run()
		if err != nil {
			return 0, err
		}
		times = append(times, d)
	}
	slices.Sort(times)
	b.Logf("baseline: the trivial envtest test takes %s warm (runs %v)", times[1], times)
	return times[1], nil
}

// reportRatio adds the x-baseline metric: the mean time per op over the
// baseline.
func reportRatio(b *testing.B, elapsed time.Duration, ops int) {
	if ops == 0 {
		return
	}
	b.ReportMetric(float64(elapsed)/float64(ops)/float64(envtestBaseline(b)), "x-baseline")
}

// timedLoop runs op b.N times (b.Loop), timing only op, and reports the ratio.
func timedLoop(b *testing.B, prepare func(i int), op func()) {
	envtestBaseline(b)
	var total time.Duration
	n := 0
	for b.Loop() {
		b.StopTimer()
		prepare(n)
		b.StartTimer()
		t := time.Now()
		op()
		total += time.Since(t)
		n++
	}
	reportRatio(b, total, n)
}

func checkOrFail(b *testing.B, opts checker.Options) *checker.Report {
	b.Helper()
	opts.Kubeconfig = kubeconfig(b)
	report, err := checker.Check(context.Background(), opts)
	if err != nil {
		b.Fatal(err)
	}
	return report
}

// BenchmarkCheckStarter measures `lab check` of a starter workspace — where
// a learner spends their time, every check failing — warm (the workspace
// checked once before), as BenchmarkCheck/warm does for a solved one.
func BenchmarkCheckStarter(b *testing.B) {
	for _, id := range []string{"3.1", "4.4"} {
		b.Run(id, func(b *testing.B) {
			lab := checkertest.Lab(b, id)
			dir := checkertest.Workspace(b, lab, false, nil)
			check := func() {
				if checkOrFail(b, checker.Options{Lab: lab, Dir: dir}).Passed() {
					b.Fatal("the starter workspace passed")
				}
			}
			check()
			timedLoop(b, func(int) {}, check)
		})
	}
}

// editedExercise is the exercise per lab whose verdict
// BenchmarkEditToVerdict times, and the file it edits.
var editedExercise = map[string][2]string{
	"3.1": {"results", "results/reconciler.go"},
	"4.4": {"statemachine", "statemachine/machine.go"},
}

// BenchmarkEditToVerdict measures one exercise's verdict after a real edit
// of one of its files (a line added, different each time, so the package
// compiles and the binary links again): passing (the solution) and failing
// (the starter).
func BenchmarkEditToVerdict(b *testing.B) {
	for _, id := range []string{"3.1", "4.4"} {
		for _, solved := range []bool{false, true} {
			verdict := map[bool]string{false: "failing", true: "passing"}[solved]
			b.Run(id+"/"+verdict, func(b *testing.B) {
				lab := checkertest.Lab(b, id)
				exID, file := editedExercise[id][0], editedExercise[id][1]
				e, err := lab.Exercise(exID)
				if err != nil {
					b.Fatal(err)
				}
				dir := checkertest.Workspace(b, lab, solved, nil)
				original, err := os.ReadFile(filepath.Join(dir, file))
				if err != nil {
					b.Fatal(err)
				}
				check := func() {
					report := checkOrFail(b, checker.Options{Lab: lab, Dir: dir, Exercises: []*labs.Exercise{e}})
					if report.Passed() != solved {
						r := report.Results[0]
						b.Fatalf("%s/%s: %s (%s), want passed %v\n%s", id, exID, r.Status, r.Reason, solved, r.Output)
					}
				}
				edit := func(i int) {
					line := fmt.Sprintf("\nvar editNumber%d = %d\n", (i+2)%2, i)
					if err := os.WriteFile(filepath.Join(dir, file), append(slices.Clip(original), line...), 0o644); err != nil {
						b.Fatal(err)
					}
				}
				edit(-1)
				check()
				timedLoop(b, edit, check)
			})
		}
	}
}
