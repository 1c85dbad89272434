package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"k8s.io/client-go/discovery"

	"github.com/operator-lab/lab/internal/buildinfo"
	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/internal/l10n"
	"github.com/operator-lab/lab/internal/session"
	"github.com/operator-lab/lab/internal/tui"
	"github.com/operator-lab/lab/observe"
)

// startTUI shows the start-up screen while the lab comes up, then the live
// view; quitting it stops the operator, removes the namespace and stops a
// private control plane.
func startTUI(ctx context.Context, opts *StartOptions, ws *startWorkspace) error {
	streams := opts.IO
	title := labTitle(opts.Lab, opts.Lang)
	kind := sampleKind(opts, ws)
	exercises := ws.exercisesMsg(opts.Lang)
	model := tui.New(tui.Options{
		Header:    tui.Header{Lab: opts.Lab, Title: title, Operator: operatorLabel(opts, ws)},
		Startup:   plannedSteps(opts, kind),
		Lang:      opts.Lang,
		Exercises: &exercises,
	})
	p := newProgram(ctx, streams, model)

	startCtx, cancelStart := context.WithCancel(ctx)
	defer cancelStart()
	type started struct {
		lab *liveLab
		err error
	}
	done := make(chan started, 1)
	goGuarded(func() {
		lab, err := bringUp(startCtx, p, opts, ws, title, kind)
		done <- started{lab, err}
	})
	progress := ws.watchProgress(startCtx, opts.Lang)
	goGuarded(func() {
		for m := range progress {
			p.Send(m)
		}
	})

	_, runErr := p.Run()
	cancelStart()
	up := <-done
	var closeErr error
	if up.lab != nil {
		fmt.Fprintln(streams.ErrOut, "lab start: stopping the operator and the control plane…")
		closeErr = up.lab.Close()
		up.lab.Bus.Close()
	}
	if errors.Is(runErr, tea.ErrProgramKilled) || errors.Is(runErr, context.Canceled) {
		runErr = nil // interrupted: a normal way to stop
	}
	startErr := up.err
	if errors.Is(startErr, context.Canceled) {
		startErr = nil // quit during start-up
	}
	return errors.Join(startErr, runErr, closeErr)
}

// bringUp starts the session and the sample object, reporting each step to
// the start-up screen, then hands the live view its events and controls.
func bringUp(ctx context.Context, p *tea.Program, opts *StartOptions, ws *startWorkspace, title, kind string) (*liveLab, error) {
	p.Send(tui.StepDoneMsg{Step: stepWorkspace, Took: ws.Took, Detail: ws.describe()})
	bus := observe.NewBus()
	// Subscribe before anything runs, so the view sees the first events too.
	sub := bus.Subscribe(observe.DefaultBuffer)
	live := opts.liveOptions(ws)
	live.Bus, live.Gate = bus, observe.NewGate()
	live.SetupLog = &stepLog{p: p, step: controlplane.StepBinaries}
	live.Progress = func(s controlplane.Step) { p.Send(tui.StepDoneMsg{Step: s.Name, Took: s.Took, Detail: s.Detail}) }
	if opts.Mine {
		p.Send(tui.StepDetailMsg{Step: stepBuildMine, Detail: "go build in a private copy of " + displayDir(ws.Dir)})
	}
	lab, err := startLiveLab(ctx, live)
	if err != nil {
		p.Send(tui.StartFailedMsg{Err: err})
		return nil, err
	}
	controls := &liveControls{operatorDriver: lab.driver, objects: lab.objects}
	t := time.Now()
	key, err := controls.CreateObject(ctx)
	step := sampleStep(opts, kind)
	if err != nil {
		p.Send(tui.StepDoneMsg{Step: step, Err: err})
		return lab, err
	}
	p.Send(tui.StepDoneMsg{Step: step, Took: time.Since(t), Detail: key})
	p.Send(tui.ReadyMsg{
		Header: tui.Header{Lab: opts.Lab, Title: title, KubernetesVersion: serverVersionOf(lab.Session),
			Address: lab.Host, Started: time.Now(), Namespace: lab.Namespace, Operator: operatorLabel(opts, ws)},
		Controls: controls,
		Events:   sub.C,
		Dropped:  sub.Dropped,
	})
	goGuarded(func() { lab.reportExit(ctx, l10n.For(viewLang(opts.Lang)), func(n tui.NoticeMsg) { p.Send(n) }) })
	goGuarded(func() {
		lab.WatchHealth(ctx, healthInterval, func(err error) {
			msg := tui.ControlPlaneMsg{Lost: err != nil}
			if err != nil {
				msg.Why = err.Error()
			}
			p.Send(msg)
		})
	})
	return lab, nil
}

// healthInterval is how often the live view checks that its control plane
// still answers.
const healthInterval = 2 * time.Second

// stepWorkspace is the first start-up step: the learner's workspace,
// shown in the learner's language (l10n:text).
const stepWorkspace = "workspace"

// operatorLabel is what the header says about whose controller runs.
func operatorLabel(opts *StartOptions, ws *startWorkspace) string {
	if !opts.Mine {
		return ""
	}
	return whoseController(opts, ws)
}

// plannedSteps are the start-up steps shown before they happen.
func plannedSteps(opts *StartOptions, kind string) []string {
	head := []string{stepWorkspace}
	tail := []string{controlplane.StepCRDs, session.StepNamespace, session.StepOperator, sampleStep(opts, kind)}
	if opts.Mine {
		head = append(head, stepBuildMine)
		tail = []string{controlplane.StepCRDs, session.StepNamespace, stepRunMine, sampleStep(opts, kind)}
	}
	switch {
	case opts.Kubeconfig != "" || opts.Context != "":
	case sharedControlPlaneRunning():
		head = append(head, controlplane.StepReuse)
	default:
		head = append(head, controlplane.StepBinaries, controlplane.StepEtcd, controlplane.StepAPIServer)
	}
	return append(head, tail...)
}

// sampleStep is the start-up step that creates the first object of kind,
// named in the view's language: the one step whose name is not a constant.
func sampleStep(opts *StartOptions, kind string) string {
	return l10n.For(viewLang(opts.Lang)).Textf("sample %s", kind)
}

func sharedControlPlaneRunning() bool {
	_, err := controlplane.ReadState()
	return err == nil
}

// stepLog shows the last line of a long step's log (a binary download or
// build) beside the step on the start-up screen.
type stepLog struct {
	p    *tea.Program
	step string
}

func (l *stepLog) Write(b []byte) (int, error) {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); last != "" {
		l.p.Send(tui.StepDetailMsg{Step: l.step, Detail: last})
	}
	return len(b), nil
}

var _ io.Writer = (*stepLog)(nil)

func serverVersionOf(sess *session.Session) string {
	dc, err := discovery.NewDiscoveryClientForConfig(sess.Config)
	if err != nil {
		return "v" + buildinfo.KubernetesVersion
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return "v" + buildinfo.KubernetesVersion
	}
	return v.GitVersion
}
