package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/labs/checkkit/cluster"
	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator"
	"github.com/operator-lab/lab/operator/crds"
	"github.com/operator-lab/lab/operator/scheme"
	"github.com/operator-lab/lab/operator/switches"
)

// Options configure a session.
type Options struct {
	// Lab is "3.1" or "4.4".
	Lab string
	// Set is applied to the switches before the operator starts ("k=v,...").
	Set string
	// Kubeconfig and Context select an existing cluster instead of a local
	// control plane. Context alone uses the default kubeconfig (KUBECONFIG
	// or ~/.kube/config).
	Kubeconfig, Context string
	// Gate is handed to the operator (nil: never pauses).
	Gate *observe.Gate
	// Bus receives the events; nil makes a new one (see Session.Bus).
	Bus *observe.Bus
	// Progress is told about start-up steps as they end: the control
	// plane's (controlplane.Step*) and the session's (Step*).
	Progress func(controlplane.Step)
	// SetupLog receives progress lines if control-plane binaries must be
	// downloaded or built.
	SetupLog io.Writer
	// Seed makes the simulated external system's flakiness reproducible.
	Seed uint64
	// NoOperator leaves the reference operator out: the session is only the
	// cluster and the namespace, for a controller run elsewhere (the
	// learner's own, under lab start --mine).
	NoOperator bool
	// CRDs are installed besides the operator's (a lab's exercise CRDs).
	CRDs []*apiextensionsv1.CustomResourceDefinition
}

// Session is a running operator. Close it.
type Session struct {
	Lab       string
	Config    *rest.Config
	Host      string
	Namespace string
	// Kubeconfig is a kubeconfig file for the cluster ("" for --context
	// sessions using the default loading rules).
	Kubeconfig string
	Bus        *observe.Bus
	Switches   *switches.Switches
	Operator   *operator.Operator
	// Client talks to the API server directly (no cache, no events): for
	// scenario drivers and the learner's own actions.
	Client client.Client

	cp      *controlplane.ControlPlane
	cancel  context.CancelFunc
	stopped chan error
}

// Start validates the options, connects to (or starts) a cluster, creates
// the session namespace and starts the operator in it. The operator runs
// until Close.
func Start(ctx context.Context, opts Options) (*Session, error) {
	if err := operator.CheckLab(opts.Lab); err != nil {
		return nil, err
	}
	bus := opts.Bus
	if bus == nil {
		bus = observe.NewBus()
	}
	sw := switches.NewForLab(opts.Lab, bus)
	if err := sw.Apply(opts.Set); err != nil {
		return nil, err
	}
	s := &Session{Lab: opts.Lab, Bus: bus, Switches: sw, stopped: make(chan error, 1)}
	if err := s.start(ctx, opts); err != nil {
		// Whatever did start (a control plane, the namespace) goes again.
		return nil, errors.Join(err, s.Close())
	}
	return s, nil
}

// start does the work of Start on s, which Close undoes however far it got.
func (s *Session) start(ctx context.Context, opts Options) error {
	if err := s.connect(ctx, opts); err != nil {
		return err
	}
	sch, err := scheme.New()
	if err != nil {
		return err
	}
	s.Client, err = client.New(s.Config, client.Options{Scheme: sch})
	if err != nil {
		return fmt.Errorf("connect to %s: %w", s.Host, err)
	}
	t := time.Now()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "lab-run-",
		Labels:       map[string]string{"app.kubernetes.io/managed-by": "lab", "lab.operator-lab.dev/lab": labelValue(opts.Lab)},
	}}
	if err := s.Client.Create(ctx, ns); err != nil {
		return fmt.Errorf("create the session namespace on %s: %w", s.Host, err)
	}
	s.Namespace = ns.Name
	progress(opts, StepNamespace, ns.Name, t)
	// The stream's first event says what it is a stream of.
	s.Bus.Emit(observe.SessionEvent(opts.Lab, ns.Name))
	if opts.NoOperator {
		return nil
	}

	mgr, err := operator.NewManager(s.Config, operator.ManagerOptions{Namespace: s.Namespace})
	if err != nil {
		return err
	}
	s.Operator, err = operator.New(mgr, operator.Options{Lab: opts.Lab, Emitter: s.Bus, Switches: s.Switches, Gate: opts.Gate, Seed: opts.Seed})
	if err != nil {
		return err
	}
	t = time.Now()
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	go func() { s.stopped <- mgr.Start(runCtx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return errors.New("the operator's cache did not sync")
	}
	progress(opts, StepOperator, opts.Lab, t)
	return nil
}

// labelValue makes a lab id usable as a label value ("4.4" is fine as it is;
// this guards against anything else).
func labelValue(lab string) string {
	if len(lab) > 63 {
		return lab[:63]
	}
	return lab
}

// The session's own start-up steps, after the control plane's, shown in
// the learner's language (l10n:text).
const (
	StepNamespace = "namespace" // Detail: the namespace's name
	StepOperator  = "operator"  // Detail: the lab
)

func progress(opts Options, name, detail string, since time.Time) {
	if opts.Progress != nil {
		opts.Progress(controlplane.Step{Name: name, Detail: detail, Took: time.Since(since)})
	}
}

// connect finds the cluster: a kubeconfig's (CRDs installed if missing) or a
// local control plane.
func (s *Session) connect(ctx context.Context, opts Options) error {
	if opts.Kubeconfig == "" && opts.Context == "" {
		all, err := crds.All()
		if err != nil {
			return err
		}
		cp, err := controlplane.Ensure(ctx, controlplane.Options{CRDs: append(all, opts.CRDs...), Progress: opts.Progress, SetupLog: opts.SetupLog})
		if err != nil {
			return err
		}
		s.cp, s.Config, s.Host, s.Kubeconfig = cp, cp.Config, cp.Host, cp.KubeconfigPath
		return nil
	}
	_, cfg, err := controlplane.LoadExternal(opts.Kubeconfig, opts.Context)
	if err != nil {
		return err
	}
	if cfg.QPS == 0 {
		// client-go's default (5 QPS) would throttle the operator and the
		// scenario's polling more than any cluster needs.
		cfg.QPS, cfg.Burst = 100, 200
	}
	s.Config, s.Host, s.Kubeconfig = cfg, cfg.Host, opts.Kubeconfig
	t := time.Now()
	created, err := crds.InstallMissing(ctx, cfg, opts.CRDs...)
	if err != nil {
		return fmt.Errorf("install lab's CRDs on %s: %w", cfg.Host, err)
	}
	detail := "present"
	if len(created) > 0 {
		detail = fmt.Sprintf("installed (%d)", len(created))
	}
	progress(opts, controlplane.StepCRDs, detail, t)
	return nil
}

// Close stops the operator, deletes the session namespace and stops a
// private control plane (a shared or external cluster keeps running).
func (s *Session) Close() error {
	var errs []error
	if s.cancel != nil {
		s.cancel()
		if err := <-s.stopped; err != nil {
			errs = append(errs, fmt.Errorf("operator: %w", err))
		}
		s.cancel = nil
	}
	if s.Namespace != "" && s.Client != nil && (s.cp == nil || s.cp.Shared) && s.answers() == nil {
		// A private control plane goes as a whole, and nothing can be
		// deleted on a cluster that does not answer (`lab env down`
		// took the shared one's namespaces along); elsewhere the
		// namespace must go.
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		if err := s.deleteNamespace(ctx); err != nil {
			errs = append(errs, err)
		}
		cancel()
	}
	s.Namespace = ""
	if s.cp != nil {
		if err := s.cp.Stop(); err != nil {
			errs = append(errs, err)
		}
		s.cp = nil
	}
	return errors.Join(errs...)
}

// deleteNamespace deletes the session namespace. On the shared local
// control plane it also empties and finalizes it, as no namespace
// controller runs there; a real cluster's takes it from the delete.
func (s *Session) deleteNamespace(ctx context.Context) error {
	if s.cp != nil {
		return cluster.DeleteNamespace(ctx, s.Config, s.Namespace)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.Namespace}}
	if err := s.Client.Delete(ctx, ns); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete namespace %s: %w", s.Namespace, err)
	}
	return nil
}

// healthTimeout bounds one readiness probe of the cluster.
const healthTimeout = 2 * time.Second

// answers probes the cluster's /readyz once. Only no answer at all (the
// connection refused, a timeout) is an error: a server that answers, even
// "not ready" or "forbidden", is there.
func (s *Session) answers() error {
	dc, err := discovery.NewDiscoveryClientForConfig(s.Config)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), healthTimeout)
	defer cancel()
	err = dc.RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
	var answered apierrors.APIStatus
	if err == nil || errors.As(err, &answered) {
		return nil
	}
	return fmt.Errorf("the control plane at %s stopped answering: %w", s.Host, err)
}

// WatchHealth probes the cluster every interval until ctx ends and calls
// changed when it stops answering (with why) and when it answers again
// (with nil), so a live view never claims a cluster that is gone.
func (s *Session) WatchHealth(ctx context.Context, interval time.Duration, changed func(error)) {
	var lost bool
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		err := s.answers()
		if ctx.Err() != nil {
			return
		}
		if (err != nil) != lost {
			lost = err != nil
			changed(err)
		}
	}
}
