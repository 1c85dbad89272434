package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// External is a cluster lab did not start, chosen with --kubeconfig and
// --context, as lab's tests and commands reach it.
type External struct {
	Config        *rest.Config
	Host, Context string
	// Kubeconfig is a private copy of the kubeconfig for the processes lab
	// starts: only the chosen context, its credentials inline, mode 0600
	// in lab's own temp folder. Close removes it.
	Kubeconfig string
	dir        string
}

// externalAnswerTimeout bounds the first call to an external cluster.
const externalAnswerTimeout = 10 * time.Second

// LoadExternal reads the cluster of kubeconfig ("" for kubectl's rules:
// $KUBECONFIG, ~/.kube/config) and context ("" for its current one).
func LoadExternal(kubeconfig, context string) (clientcmd.ClientConfig, *rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		if _, err := os.Stat(kubeconfig); err != nil {
			return nil, nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
		}
		rules = &clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}
	}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context})
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("load the kubeconfig: %w", err)
	}
	return loader, cfg, nil
}

// OpenExternal loads the cluster as LoadExternal does, makes sure it
// answers, and writes the private kubeconfig.
func OpenExternal(ctx context.Context, kubeconfig, context string) (*External, error) {
	loader, cfg, err := LoadExternal(kubeconfig, context)
	if err != nil {
		return nil, err
	}
	raw, err := loader.RawConfig()
	if err != nil {
		return nil, fmt.Errorf("load the kubeconfig: %w", err)
	}
	if context != "" {
		raw.CurrentContext = context
	}
	e := &External{Config: cfg, Host: cfg.Host, Context: raw.CurrentContext}
	if err := answers(ctx, cfg); err != nil {
		return nil, fmt.Errorf("the cluster at %s (context %q) does not answer: %w; is it running, and is this the kubeconfig (and context) you meant?", cfg.Host, e.Context, err)
	}
	if err := clientcmdapi.MinifyConfig(&raw); err != nil {
		return nil, fmt.Errorf("kubeconfig context %q: %w", e.Context, err)
	}
	if err := clientcmdapi.FlattenConfig(&raw); err != nil {
		return nil, fmt.Errorf("read the credentials of context %q: %w", e.Context, err)
	}
	if e.dir, err = os.MkdirTemp("", "lab-kubeconfig-"); err != nil {
		return nil, fmt.Errorf("create a folder for the kubeconfig: %w", err)
	}
	e.Kubeconfig = filepath.Join(e.dir, "kubeconfig")
	if err := clientcmd.WriteToFile(raw, e.Kubeconfig); err != nil {
		e.Close()
		return nil, fmt.Errorf("write the private kubeconfig: %w", err)
	}
	return e, nil
}

// Close removes the private kubeconfig.
func (e *External) Close() {
	if e != nil && e.dir != "" {
		_ = os.RemoveAll(e.dir)
	}
}

// answers asks the cluster for its version: any answer of the server, even
// a refusal, means it is there; only no answer is an error.
func answers(ctx context.Context, cfg *rest.Config) error {
	probe := rest.CopyConfig(cfg)
	probe.Timeout = externalAnswerTimeout
	dc, err := discovery.NewDiscoveryClientForConfig(probe)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, externalAnswerTimeout)
	defer cancel()
	err = dc.RESTClient().Get().AbsPath("/version").Do(ctx).Error()
	var status apierrors.APIStatus
	if err == nil || errors.As(err, &status) {
		return nil
	}
	return err
}

// AddUser makes a user of a private control plane, in groups, with no
// rights but those RBAC gives the groups, and writes a kubeconfig for it
// into the control plane's folder: a learner's credentials on a shared
// cluster, for tests.
func (cp *ControlPlane) AddUser(name string, groups ...string) (kubeconfig string, err error) {
	if cp.env == nil {
		return "", errors.New("only a private control plane can add users")
	}
	u, err := cp.env.ControlPlane.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return "", fmt.Errorf("add user %s: %w", name, err)
	}
	raw, err := u.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("kubeconfig of user %s: %w", name, err)
	}
	kubeconfig = filepath.Join(cp.dir, "user-"+name+".kubeconfig")
	if err := os.WriteFile(kubeconfig, raw, 0o600); err != nil {
		return "", fmt.Errorf("write the kubeconfig of user %s: %w", name, err)
	}
	return kubeconfig, nil
}
