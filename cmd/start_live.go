package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/internal/iostreams"
	"github.com/operator-lab/lab/internal/l10n"
	"github.com/operator-lab/lab/internal/learnerctl"
	"github.com/operator-lab/lab/internal/mine"
	"github.com/operator-lab/lab/internal/session"
	"github.com/operator-lab/lab/internal/tui"
	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator/scenario"
)

// Start-up steps of `lab start --mine`, besides the session's own, shown
// in the learner's language (l10n:text).
const (
	stepBuildMine = "build your controller"
	stepRunMine   = "your controller"
)

// liveLab is a running lab: the session (cluster and namespace) and the
// controller in it — lab's reference operator, or, with --mine, the
// learner's own, built from their workspace and run as a child process.
type liveLab struct {
	*session.Session
	// mine is the learner's controller (nil for the reference operator).
	mine    *learnerctl.Process
	objects *scenario.ClientObjects
	driver  operatorDriver
}

// liveLabOptions say which lab to run and how to report its start-up.
type liveLabOptions struct {
	Lab                 string
	Set                 string
	Kubeconfig, Context string
	// Mine runs the controller of this workspace instead of the reference one.
	Mine *startWorkspace
	Bus  *observe.Bus
	// Gate is the reference operator's step-through gate (the learner's
	// controller has its own, in its process).
	Gate     *observe.Gate
	Progress func(controlplane.Step)
	SetupLog io.Writer
	// Echo, if set, shows what the learner's controller prints, as it prints it.
	Echo io.Writer
}

func (o liveLabOptions) progress(step string, since time.Time) {
	if o.Progress != nil {
		o.Progress(controlplane.Step{Name: step, Took: time.Since(since)})
	}
}

// startLiveLab brings the lab up; Close it.
func startLiveLab(ctx context.Context, o liveLabOptions) (*liveLab, error) {
	opts := session.Options{Lab: o.Lab, Set: o.Set, Kubeconfig: o.Kubeconfig, Context: o.Context,
		Bus: o.Bus, Gate: o.Gate, Progress: o.Progress, SetupLog: o.SetupLog}
	if o.Mine == nil {
		sess, err := session.Start(ctx, opts)
		if err != nil {
			return nil, err
		}
		gate := o.Gate
		if gate == nil {
			gate = observe.NewGate() // never paused: nothing drives it
		}
		return &liveLab{Session: sess, objects: newLabObjects(sess, scenario.Reference(o.Lab)),
			driver: &referenceDriver{sess: sess, gate: gate}}, nil
	}

	lab := o.Mine.Lab
	t := time.Now()
	program, err := mine.Build(ctx, lab, o.Mine.Dir)
	if err != nil {
		return nil, err
	}
	o.progress(stepBuildMine, t)
	if opts.CRDs, err = lab.CustomResourceDefinitions(); err != nil {
		return nil, err
	}
	gvk, err := lab.SampleKind()
	if err != nil {
		return nil, err
	}
	opts.NoOperator = true
	sess, err := session.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	t = time.Now()
	proc, err := learnerctl.Start(ctx, learnerctl.Options{Program: program, Namespace: sess.Namespace,
		Kubeconfig: sess.Kubeconfig, Context: o.Context, Bus: o.Bus, Output: o.Echo})
	if err != nil {
		return nil, errors.Join(err, sess.Close())
	}
	o.progress(stepRunMine, t)
	return &liveLab{Session: sess, mine: proc, objects: newLabObjects(sess, learnerSamples{lab: lab, gvk: gvk}),
		driver: learnerDriver{proc}}, nil
}

// Close stops the learner's controller (if any), then the session.
func (l *liveLab) Close() error {
	if l.mine != nil {
		_ = l.mine.Stop()
	}
	return l.Session.Close()
}

// learnerSamples are the runner's sample objects, as the lab declares
// them (`lab start --mine`).
type learnerSamples struct {
	lab *labs.Lab
	gvk schema.GroupVersionKind
}

func (s learnerSamples) Name() string { return s.lab.Runner.Sample.Name }

func (s learnerSamples) New(namespace, name string, invalid bool) (client.Object, string, error) {
	obj, err := s.lab.Runner.Sample.New(s.gvk, namespace, 1, invalid)
	if err != nil {
		return nil, "", err
	}
	// The scenario package numbers the samples; Sample.New's first is the
	// lab's declared object, renamed.
	obj.SetName(name)
	message := ""
	if invalid {
		message = fmt.Sprintf("spec %v", s.lab.Runner.Sample.Invalid)
	}
	return obj, message, nil
}

func (s learnerSamples) Empty() client.Object {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(s.gvk)
	return u
}

func (s learnerSamples) Change(obj client.Object) (string, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return "", fmt.Errorf("%s is not a sample object", obj.GetName())
	}
	return s.lab.Runner.Sample.Change(u)
}

// exited is closed when the learner's controller ends by itself; never
// for the reference operator.
func (l *liveLab) exited() <-chan struct{} {
	if l.mine == nil {
		return nil
	}
	return l.mine.Exited()
}

// reportExit tells the live view if the learner's controller ends by itself
// (their code exits or crashes outside a reconcile), with the last line it
// printed; ending because lab stops (ctx done) is not news.
func (l *liveLab) reportExit(ctx context.Context, say l10n.Printer, tell func(tui.NoticeMsg)) {
	select {
	case <-ctx.Done():
		return
	case <-l.exited():
	}
	why := l.mine.Err().Error()
	if out := l.mine.Output(); len(out) > 0 {
		why = say.Textf("your controller exited; its last words: %s", out[len(out)-1])
	}
	tell(tui.NoticeMsg{Text: say.Textf("%s — fix it, then start again", why), Bad: true})
}

// newProgram makes a full-screen program of the live view. It ends when
// ctx does: lab's own stop signals cancel ctx, and bubbletea's signal
// handler is off, as the two together could deadlock (its handler blocks
// sending a quit message that nobody reads once ctx is cancelled).
func newProgram(ctx context.Context, streams *iostreams.IOStreams, model tea.Model) *tea.Program {
	return tea.NewProgram(model, tea.WithAltScreen(), tea.WithContext(ctx), tea.WithoutSignalHandler(),
		tea.WithInput(streams.In), tea.WithOutput(streams.Out))
}
