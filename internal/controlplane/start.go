package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/operator-lab/lab/internal/proc"
	"github.com/operator-lab/lab/internal/tally"
)

// Start-up steps reported to Options.Progress, in order. The start-up
// screen shows them in the learner's language (l10n:text).
const (
	StepBinaries  = "binaries"
	StepEtcd      = "etcd"
	StepAPIServer = "kube-apiserver"
	StepCRDs      = "CRDs"
	StepReuse     = "reuse lab env"
)

// Step is a start-up step that finished: the start-up screen and `lab run`
// show it as it is, so no one takes a string apart to find its parts.
type Step struct {
	Name   string // one of the Step* names (or a session's own)
	Detail string // what the step says about itself: "lab-run-x7", "installed (3)"
	Took   time.Duration
}

// String is the step as a line of text shows it: "namespace lab-run-x7".
func (s Step) String() string {
	if s.Detail == "" {
		return s.Name
	}
	return s.Name + " " + s.Detail
}

// Options configure a control plane.
type Options struct {
	// CRDs are installed (and waited for) once the API server is up.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// Progress is told each start-up step as it ends (etcd's while
	// kube-apiserver still starts, from another goroutine; never two at once).
	Progress func(Step)
	// SetupLog receives progress lines when binaries must be downloaded or built.
	SetupLog io.Writer
}

func (o Options) progress(name, detail string, took time.Duration) {
	if o.Progress != nil {
		o.Progress(Step{Name: name, Detail: detail, Took: took})
	}
}

// ControlPlane is a running control plane: a private envtest or the shared
// one of `lab env up`.
type ControlPlane struct {
	Config         *rest.Config
	KubeconfigPath string
	// Host is the API server URL (always a loopback address for local ones).
	Host              string
	KubernetesVersion string
	StartedAt         time.Time
	// Shared is true when this is the `lab env up` control plane: Stop leaves it running.
	Shared bool

	env *envtest.Environment
	dir string
	// attachment is this process's registration with the shared control plane.
	attachment string
}

// Start starts a private control plane: etcd and kube-apiserver on loopback
// with the given CRDs installed. The children are started so that they die
// with this process even if it is killed with SIGKILL.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	t := time.Now()
	bins, err := Setup(ctx, SetupOptions{Log: opts.SetupLog})
	if err != nil {
		return nil, err
	}
	opts.progress(StepBinaries, "", time.Since(t))
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}

	dir, err := os.MkdirTemp("", "lab-controlplane-")
	if err != nil {
		return nil, fmt.Errorf("create the control-plane directory: %w", err)
	}
	cp := &ControlPlane{dir: dir}
	ok := false
	defer func() {
		if !ok {
			_ = cp.Stop()
		}
	}()
	etcdPath, apiserverPath, err := deathLinkedLaunchers(dir, bins)
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    bins.Dir,
		ControlPlaneStartTimeout: 60 * time.Second,
		ControlPlaneStopTimeout:  20 * time.Second,
	}
	// envtest binds both to loopback addresses with free ports. Their data
	// and certificates go into this control plane's folder, which Stop
	// removes whatever happened: envtest's own temp folders outlive a
	// failed start.
	certDir, dataDir := filepath.Join(dir, "certs"), filepath.Join(dir, "etcd")
	for _, d := range []string{certDir, dataDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, fmt.Errorf("create the control-plane directory: %w", err)
		}
	}
	apiserver := env.ControlPlane.GetAPIServer()
	apiserver.Path, apiserver.CertDir = apiserverPath, certDir
	env.ControlPlane.Etcd = &envtest.Etcd{Path: etcdPath, DataDir: dataDir}
	cp.env = env

	cfg, err := startSteps(ctx, opts,
		func(ctx context.Context) <-chan time.Duration { return watchEtcdReady(ctx, dir) },
		func() (*rest.Config, error) { return startEnv(ctx, env, dir, func() { _ = cp.Stop() }) })
	if errors.Is(err, errStartAbandoned) {
		ok = true // startEnv stops what started, once envtest lets go of it
		return nil, context.Cause(ctx)
	}
	if err != nil {
		return nil, startError(bins, err)
	}
	tally.Add(tally.ControlPlane, 1)
	cp.Config = cfg
	cp.Host = strings.TrimSuffix(cfg.Host, "/")
	cp.StartedAt = time.Now()
	cp.KubeconfigPath = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(cp.KubeconfigPath, env.KubeConfig, 0o600); err != nil {
		return nil, fmt.Errorf("write the kubeconfig: %w", err)
	}
	if err := cp.installCRDs(opts); err != nil {
		return nil, err
	}
	cp.KubernetesVersion = serverVersion(cfg)
	ok = true
	return cp, nil
}

// startSteps runs start (envtest: etcd, then kube-apiserver) and reports
// the etcd step as soon as etcd answers — kube-apiserver is still
// starting then, so the start-up screen moves on to it — and the
// kube-apiserver step once start returns. watch starts timing etcd: it
// says how long etcd took to answer, or closes when that cannot be told.
func startSteps(ctx context.Context, opts Options, watch func(context.Context) <-chan time.Duration, start func() (*rest.Config, error)) (*rest.Config, error) {
	t := time.Now()
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	etcdReady := watch(watchCtx)
	type timed struct {
		took time.Duration
		ok   bool
	}
	etcd := make(chan timed, 1) // sent once the etcd step is reported, or known not to be timed
	go func() {
		took, ok := <-etcdReady
		if ok {
			opts.progress(StepEtcd, "", took)
		}
		etcd <- timed{took, ok}
	}()
	cfg, err := start()
	if err != nil {
		// No step is reported after a failed start returns: the failure
		// is told against the first step not reported.
		stopWatch()
		<-etcd
		return nil, err
	}
	if e := <-etcd; e.ok {
		opts.progress(StepAPIServer, "", time.Since(t)-e.took)
	} else {
		// etcd's own part could not be timed: both steps took this long.
		took := time.Since(t)
		opts.progress(StepEtcd, "with kube-apiserver", took)
		opts.progress(StepAPIServer, "", took)
	}
	return cfg, nil
}

func (cp *ControlPlane) installCRDs(opts Options) error {
	if len(opts.CRDs) == 0 {
		return nil
	}
	t := time.Now()
	// envtest mutates what it installs; give it copies.
	crds := make([]*apiextensionsv1.CustomResourceDefinition, len(opts.CRDs))
	for i, c := range opts.CRDs {
		crds[i] = c.DeepCopy()
	}
	if _, err := envtest.InstallCRDs(cp.Config, envtest.CRDInstallOptions{CRDs: crds}); err != nil {
		return fmt.Errorf("install CRDs: %w", err)
	}
	opts.progress(StepCRDs, "", time.Since(t))
	return nil
}

// Stop stops a private control plane and removes its files. The shared
// control plane keeps running (`lab env down` stops that one): Stop only
// removes this process's registration with it.
func (cp *ControlPlane) Stop() error {
	if cp == nil {
		return nil
	}
	if cp.Shared {
		return unregisterAttachment(cp.attachment)
	}
	var err error
	if cp.env != nil && cp.Config != nil {
		err = cp.env.Stop()
	} else if cp.env != nil {
		// A failed start can leave one of the two running.
		_ = cp.env.ControlPlane.Stop()
	}
	if cp.dir != "" {
		_ = os.RemoveAll(cp.dir)
	}
	if err != nil {
		return fmt.Errorf("stop the control plane: %w", err)
	}
	return nil
}

func serverVersion(cfg *rest.Config) string {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return ""
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return ""
	}
	return v.GitVersion
}

// deathLinkedLaunchers writes small launchers that start etcd and
// kube-apiserver through setpriv with a parent-death signal, so the kernel
// kills them when lab dies, however it dies. envtest offers no hook for
// SysProcAttr.Pdeathsig; exec keeps the PID, so envtest still stops them as usual.
// Without setpriv (not Linux), the binaries are used directly and only a
// clean exit stops them.
func deathLinkedLaunchers(dir string, bins Binaries) (etcdPath, apiserverPath string, err error) {
	setpriv, lookErr := exec.LookPath("setpriv")
	launch := func(name, extra string) (string, error) {
		if lookErr != nil {
			return bins.Path(name), nil
		}
		path := filepath.Join(dir, "launch-"+name)
		script := "#!/bin/sh\n" + extra + "exec " + shellQuote(setpriv) + " --pdeathsig KILL -- " + shellQuote(bins.Path(name)) + " \"$@\"\n"
		if err := os.WriteFile(path, []byte(script), 0o700); err != nil {
			return "", fmt.Errorf("write the %s launcher: %w", name, err)
		}
		return path, nil
	}
	// The etcd launcher also records etcd's arguments, from which
	// watchEtcdReady learns its client URL to time the etcd step on its own.
	etcdPath, err = launch("etcd", "printf '%s\\n' \"$@\" > "+shellQuote(filepath.Join(dir, "etcd.args"))+"\n")
	if err != nil {
		return "", "", err
	}
	apiserverPath, err = launch("kube-apiserver", "")
	return etcdPath, apiserverPath, err
}

// startEnv starts envtest, which cannot be interrupted itself: when ctx
// ends first, the processes it waits for are killed and startEnv returns
// at once (Ctrl-C during start-up), leaving cleanUp to run once envtest
// gives up; if lab exits before that, the kernel and its exit clean up.
func startEnv(ctx context.Context, env *envtest.Environment, dir string, cleanUp func()) (*rest.Config, error) {
	type result struct {
		cfg *rest.Config
		err error
	}
	done := make(chan result, 1)
	go func() {
		cfg, err := env.Start()
		done <- result{cfg, err}
	}()
	select {
	case r := <-done:
		return r.cfg, r.err
	case <-ctx.Done():
	}
	// Every process envtest started for this control plane names its
	// folder in its arguments (the launcher's path, --data-dir, --cert-dir).
	// Killing them makes envtest give up; until it has, whatever it starts
	// next is killed too — a process left writing into the folder would
	// keep lab from removing it.
	proc.KillChildrenMentioning(dir)
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				cleanUp()
				return
			case <-tick.C:
				proc.KillChildrenMentioning(dir)
			}
		}
	}()
	return nil, errStartAbandoned
}

// errStartAbandoned: startEnv returned before envtest, as ctx ended.
var errStartAbandoned = errors.New("control-plane start abandoned")

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// watchEtcdReady reports how long etcd took to answer /health, or closes the
// channel without a value if that cannot be told.
func watchEtcdReady(ctx context.Context, dir string) <-chan time.Duration {
	out := make(chan time.Duration, 1)
	start := time.Now()
	go func() {
		defer close(out)
		deadline := time.After(60 * time.Second)
		for {
			if url := etcdClientURL(filepath.Join(dir, "etcd.args")); url != "" {
				resp, err := http.Get(url + "/health")
				if err == nil {
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						out <- time.Since(start)
						return
					}
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-deadline:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return out
}

func etcdClientURL(argsFile string) string {
	data, err := os.ReadFile(argsFile)
	if err != nil {
		return ""
	}
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if v, ok := strings.CutPrefix(l, "--advertise-client-urls="); ok {
			return strings.Split(v, ",")[0]
		}
		if l == "--advertise-client-urls" && i+1 < len(lines) {
			return strings.Split(lines[i+1], ",")[0]
		}
	}
	return ""
}

// configFromKubeconfig loads a rest.Config from a kubeconfig file.
func configFromKubeconfig(path string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}
