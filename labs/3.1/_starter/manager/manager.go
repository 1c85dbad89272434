// Package manager is exercise 1: build a controller-runtime Manager with
// today's options and register a controller on it.
package manager

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	learnv1alpha1 "example.com/lab31/api/v1alpha1"
)

// Config holds the settings main (or the checks) choose.
type Config struct {
	// MetricsAddr is where /metrics is served, e.g. "127.0.0.1:8080".
	MetricsAddr string
	// ProbeAddr is where /healthz and /readyz are served, e.g. "127.0.0.1:8081".
	ProbeAddr string
	// LeaderElectionID names the Lease the replicas compete for.
	LeaderElectionID string
	// LeaderElectionNamespace is where that Lease lives.
	LeaderElectionNamespace string
	// Namespace limits the manager's cache (and so its controllers) to one
	// namespace; "" watches all of them.
	Namespace string
}

// NewScheme returns a scheme with the built-in types and HelloWorld.
func NewScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("add client-go types: %w", err)
	}
	// TODO(lab): add the HelloWorld types (learnv1alpha1.AddToScheme) too.
	return scheme, nil
}

// New builds a Manager: scheme, metrics server, health probes and leader
// election, with the health and readiness checks registered.
func New(cfg *rest.Config, c Config) (ctrl.Manager, error) {
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	// TODO(lab): fill in the options: the scheme, the metrics server
	// (metricsserver.Options), the health probe address, leader election
	// with its ID and namespace, and a cache limited to c.Namespace
	// (cache.Options{DefaultNamespaces: ...}) when it is set. Older
	// tutorials use MetricsBindAddress and Port: those fields are gone.
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	_ = scheme
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	// TODO(lab): register a health check ("healthz") and a readiness check
	// ("readyz"); healthz.Ping is enough for both.
	_ = healthz.Ping
	return mgr, nil
}

// HelloWorldReconciler keeps a ConfigMap with each HelloWorld's message.
// Its Reconcile is written for you; exercise 2 looks at it closely.
type HelloWorldReconciler struct {
	Client client.Client
}

// Reconcile creates or updates the HelloWorld's ConfigMap.
func (r *HelloWorldReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var hello learnv1alpha1.HelloWorld
	if err := r.Client.Get(ctx, req.NamespacedName, &hello); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: ctrl.ObjectMeta{Name: hello.Name + "-greeting", Namespace: hello.Namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = map[string]string{"message": hello.Spec.Message}
		return controllerutil.SetControllerReference(&hello, cm, r.Client.Scheme())
	})
	return ctrl.Result{}, err
}

// SetupWithManager registers the reconciler: it watches HelloWorlds and the
// ConfigMaps they own, with the options it is given.
func (r *HelloWorldReconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	// TODO(lab): also watch the ConfigMaps a HelloWorld owns, and apply opts.
	return ctrl.NewControllerManagedBy(mgr).
		For(&learnv1alpha1.HelloWorld{}).
		Complete(r)
}
