package mine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/checker/checkertest"

	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/internal/learnerctl"
	"github.com/operator-lab/lab/internal/mine"
	"github.com/operator-lab/lab/internal/proc"
	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/checkkit/cluster"
	"github.com/operator-lab/lab/observe"
)

func TestMain(m *testing.M) {
	if code, ok := proc.RunIfSupervisor(); ok {
		os.Exit(code)
	}
	// Build folders and state of this binary's own, not the user's.
	cleanup, err := labtest.HermeticProcess()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mine tests:", err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// startControlPlane starts a control plane with the labs' CRDs for the
// test and returns its kubeconfig.
func startControlPlane(t *testing.T, ids ...string) string {
	t.Helper()
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, id := range ids {
		labCRDs, err := checkertest.Lab(t, id).CustomResourceDefinitions()
		if err != nil {
			t.Fatal(err)
		}
		crds = append(crds, labCRDs...)
	}
	cp, err := controlplane.Start(context.Background(), controlplane.Options{CRDs: crds, SetupLog: os.Stderr})
	if err != nil {
		t.Fatalf("start control plane: %v", err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	return cp.KubeconfigPath
}

// TestRunnerRunsTheLearnersController builds each lab's runner from a
// solved workspace and runs it as `lab start --mine` does: the sample
// object is reconciled by the learner's code, its events arrive on lab's
// bus, the world switch and the step-through gate work through the line
// protocol, and stopping leaves no process behind.
func TestRunnerRunsTheLearnersController(t *testing.T) {
	kubeconfig := startControlPlane(t, "3.1", "4.4")
	for _, tc := range []struct {
		lab string
		// done says the first sample got where the solution takes it.
		done            func(key string, events []observe.Event) bool
		switchTo        string
		worldSwitchName string
		// afterSwitch, if set, says the second sample's reconcile met the
		// world as switched.
		afterSwitch func(key string, events []observe.Event) bool
	}{
		{lab: "3.1", switchTo: "not-ready", worldSwitchName: "external",
			done: func(key string, events []observe.Event) bool {
				return has(events, func(e observe.Event) bool {
					return e.Key == key && e.Kind == observe.KindCondition && e.Type == "Ready" && e.Status == "True"
				})
			},
			// A dependency that is not ready is not an ok call: the live
			// view showed it as a green tick and "100% ok".
			afterSwitch: func(key string, events []observe.Event) bool {
				return has(events, func(e observe.Event) bool {
					return e.Key == key && e.Kind == observe.KindExternal && e.Op == "dependency" && e.Outcome == "not-ready"
				})
			}},
		{lab: "4.4", switchTo: "down", worldSwitchName: "external",
			done: func(key string, events []observe.Event) bool {
				return has(events, func(e observe.Event) bool {
					return e.Key == key && e.Kind == observe.KindPhase && e.To == "Ready"
				})
			}},
	} {
		t.Run(tc.lab, func(t *testing.T) {
			lab := checkertest.Lab(t, tc.lab)
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			ws := checkertest.Workspace(t, lab, true, nil)
			program, err := mine.Build(ctx, lab, ws)
			if err != nil {
				t.Fatalf("build the runner: %v", err)
			}

			c, ns := runnerNamespace(t, kubeconfig)
			bus := observe.NewBus()
			rec := observe.NewRecorder(bus)
			p, err := learnerctl.Start(ctx, learnerctl.Options{Program: program, Namespace: ns, Kubeconfig: kubeconfig, Bus: bus})
			if err != nil {
				t.Fatalf("start the runner: %v", err)
			}
			pid := p.PID()
			stopped := false
			defer func() {
				if !stopped {
					_ = p.Stop()
				}
			}()
			sw, value := p.Switch()
			if sw.Name != tc.worldSwitchName || len(sw.Values) < 2 || value != sw.Values[0] {
				t.Fatalf("the runner announced switch %+v = %q", sw, value)
			}

			first := createSample(t, ctx, c, lab, ns, 1)
			waitEvents(t, ctx, rec, "the learner's controller to finish "+first, func(events []observe.Event) bool {
				return tc.done(first, events)
			})
			events := rec.Events()
			if !has(events, func(e observe.Event) bool { return e.Kind == observe.KindQueueAdd && e.Key == first && e.Cause != 0 }) {
				t.Errorf("no queue.add for %s points back at its watch event", first)
			}
			for _, e := range events {
				if e.Kind == observe.KindQueueAdd && e.Cause != 0 && !has(events, func(w observe.Event) bool { return w.Seq == e.Cause && w.Kind == observe.KindWatch }) {
					t.Errorf("queue.add seq %d names cause %d, which is not a watch event on lab's bus", e.Seq, e.Cause)
				}
			}

			if err := p.Set(sw.Name, tc.switchTo); err != nil {
				t.Fatal(err)
			}
			waitEvents(t, ctx, rec, "the switch event", func(events []observe.Event) bool {
				return has(events, func(e observe.Event) bool { return e.Kind == observe.KindSwitch && e.Value == tc.switchTo })
			})
			if err := p.Set("requeue", "error"); err == nil || !strings.Contains(err.Error(), sw.Name) {
				t.Errorf("setting a switch the runner lacks: %v, want an error naming %s", err, sw.Name)
			}

			// Step-through: a paused gate holds the next object's reconcile
			// until one step lets it run.
			p.Pause()
			// The pause travels to the runner as a line: wait until it says
			// it paused, or the next object may get past the gate first.
			waitEvents(t, ctx, rec, "the runner to pause", func(events []observe.Event) bool {
				return has(events, func(e observe.Event) bool { return e.GateAction() == observe.GatePaused })
			})
			second := createSample(t, ctx, c, lab, ns, 2)
			waitHeldAtGate(t, ctx, rec, p, second)
			if !p.Paused() || p.Waiting() != 1 {
				t.Errorf("paused=%v waiting=%d, want true and 1", p.Paused(), p.Waiting())
			}
			p.Step()
			waitEvents(t, ctx, rec, "the stepped reconcile of "+second, func(events []observe.Event) bool {
				return has(events, func(e observe.Event) bool { return e.Kind == observe.KindReconcileEnd && e.Key == second })
			})
			if tc.afterSwitch != nil && !tc.afterSwitch(second, rec.Events()) {
				t.Errorf("the reconcile of %s with %s=%s did not report the world so:\n%s", second, sw.Name, tc.switchTo, observe.Lines(rec.Events(), observe.LineOptions{}))
			}
			p.Resume()

			if err := p.Stop(); err != nil {
				t.Fatal(err)
			}
			stopped = true
			select {
			case <-p.Exited():
			default:
				t.Fatal("Stop returned before the runner exited")
			}
			if labtest.Alive(pid) {
				t.Errorf("the runner (pid %d) outlived Stop", pid)
			}
		})
	}
}

// TestRunnerBuildsFromTheStarters: `lab start --mine` works before the
// learner has written anything, so they can watch the starter's behaviour
// and then their own.
func TestRunnerBuildsFromTheStarters(t *testing.T) {
	for _, id := range []string{"3.1", "4.4"} {
		lab := checkertest.Lab(t, id)
		if _, err := mine.Build(context.Background(), lab, checkertest.Workspace(t, lab, false, nil)); err != nil {
			t.Errorf("lab %s: the runner does not build from the starter code: %v", id, err)
		}
	}
}

// TestRunnerReportsCompileErrorsInTheLearnersFiles: a runner build of code
// that does not compile names the learner's own file and line.
func TestRunnerReportsCompileErrorsInTheLearnersFiles(t *testing.T) {
	lab := checkertest.Lab(t, "3.1")
	file := lab.Runner.Exercise + "/reconciler.go"
	ws := checkertest.Workspace(t, lab, false, map[string]string{file: "package results\n\nfunc broken() { undefinedThing() }\n"})
	_, err := mine.Build(context.Background(), lab, ws)
	var compile *mine.CompileError
	if !errors.As(err, &compile) {
		t.Fatalf("Build: %v, want a CompileError", err)
	}
	if !strings.HasPrefix(compile.First, file+":3:") || !strings.Contains(compile.First, "undefinedThing") {
		t.Errorf("first compile error %q does not point at %s:3", compile.First, file)
	}
}

// TestRunnerRefusesCodeThePolicyRejects: the runner runs the learner's
// code with lab's rights, so code the checks would not run (here, writing
// the workspace's progress file) is not built either, and the learner is
// told which line is why.
func TestRunnerRefusesCodeThePolicyRejects(t *testing.T) {
	lab := checkertest.Lab(t, "4.4")
	file := "idempotency/forge.go"
	ws := checkertest.Workspace(t, lab, true, map[string]string{file: "package idempotency\n\nimport \"os\"\n\nfunc init() { _ = os.WriteFile(\".lab/progress.json\", nil, 0o600) }\n"})
	before := labtest.TakeSnapshot(t, ws)
	bin, err := mine.Build(context.Background(), lab, ws)
	var policy *checker.PolicyError
	if !errors.As(err, &policy) {
		t.Fatalf("Build: %q, %v; want a PolicyError", bin, err)
	}
	if want := file + ":5:"; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "WriteFile") {
		t.Errorf("error %q does not name os.WriteFile at %s", err, want)
	}
	if changes := before.Changes(labtest.TakeSnapshot(t, ws)); len(changes) > 0 {
		t.Errorf("the refused build changed the workspace: %v", changes)
	}
}

func has(events []observe.Event, match func(observe.Event) bool) bool {
	for _, e := range events {
		if match(e) {
			return true
		}
	}
	return false
}

func waitEvents(t *testing.T, ctx context.Context, rec *observe.Recorder, what string, done func([]observe.Event) bool) {
	t.Helper()
	waitCtx, cancel := context.WithTimeout(ctx, 2*time.Minute) // generous: make test runs many things at once
	defer cancel()
	if err := rec.WaitFor(waitCtx, done); err != nil {
		t.Fatalf("waiting for %s: %v\n%s", what, err, observe.Lines(rec.Events(), observe.LineOptions{}))
	}
}

// waitHeldAtGate waits until key's reconcile is held at the paused gate.
// The gate holds whichever reconcile comes first, and the runner has one
// worker: a late reconcile of another object (the first sample's, after its
// last status write, when the machine is loaded) can reach the gate before
// key and keep key in the queue behind it. Such reconciles are stepped
// through one at a time, as a learner stepping would.
func waitHeldAtGate(t *testing.T, ctx context.Context, rec *observe.Recorder, p *learnerctl.Process, key string) {
	t.Helper()
	stepped := 0
	for {
		held, others := false, 0
		waitEvents(t, ctx, rec, key+" held at the gate", func(events []observe.Event) bool {
			held, others = false, 0
			for _, e := range events {
				if e.GateAction() != observe.GateWaiting {
					continue
				}
				if e.Key == key {
					held = true
				} else {
					others++
				}
			}
			return held || others > stepped
		})
		if held {
			return
		}
		p.Step()
		stepped++
	}
}

// runnerNamespace connects to the package's control plane and makes a
// namespace for one runner, with the checks' own toolkit (which finds the
// control plane as the checks do, through KUBECONFIG).
func runnerNamespace(t *testing.T, kubeconfig string) (client.Client, string) {
	t.Helper()
	t.Setenv("KUBECONFIG", kubeconfig)
	c := cluster.Client(t, cluster.Config(t), clientgoscheme.Scheme)
	return c, cluster.Namespace(t, c)
}

func createSample(t *testing.T, ctx context.Context, c client.Client, lab *labs.Lab, ns string, n int) string {
	t.Helper()
	gvk, err := lab.SampleKind()
	if err != nil {
		t.Fatal(err)
	}
	obj, err := lab.Runner.Sample.New(gvk, ns, n, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, obj); err != nil {
		t.Fatalf("create %s: %v", obj.GetName(), err)
	}
	return ns + "/" + obj.GetName()
}

// BenchmarkBuild is the build step of `lab start --mine` with the Go
// build cache warm: unchanged code (a restart), and after an edit to the
// learner's controller (the usual edit → restart loop).
func BenchmarkBuild(b *testing.B) {
	for _, id := range []string{"3.1", "4.4"} {
		lab := checkertest.Lab(b, id)
		ex, err := lab.Exercise(lab.Runner.Exercise)
		if err != nil {
			b.Fatal(err)
		}
		build := func(b *testing.B, dir string) {
			if _, err := mine.Build(context.Background(), lab, dir); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(id+"/unchanged", func(b *testing.B) {
			dir := checkertest.Workspace(b, lab, true, nil)
			build(b, dir)
			for b.Loop() {
				build(b, dir)
			}
		})
		b.Run(id+"/edited", func(b *testing.B) {
			dir := checkertest.Workspace(b, lab, true, nil)
			build(b, dir)
			file := filepath.Join(dir, filepath.FromSlash(ex.Files[0]))
			edits := 0
			for b.Loop() {
				b.StopTimer()
				edits++
				f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					b.Fatal(err)
				}
				fmt.Fprintf(f, "\n// edit %d\n", edits)
				f.Close()
				b.StartTimer()
				build(b, dir)
			}
		})
	}
}
