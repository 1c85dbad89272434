package operator

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/operator-lab/lab/operator/scheme"
)

// ManagerOptions configure NewManager.
type ManagerOptions struct {
	// Namespace limits the manager's cache — and so every watch — to one
	// namespace. Empty watches all namespaces.
	Namespace string
}

// NewManager returns a manager suited to running the reference operator
// inside lab: the operator's scheme, no metrics or health endpoints (several
// labs may run on one machine), no leader election (one replica), and
// controller-name validation off (tests and `lab start` may build several
// managers in one process). It is the current form of the lesson's
// ctrl.Options: metrics are configured with Metrics: metricsserver.Options{...},
// not MetricsBindAddress.
func NewManager(cfg *rest.Config, opts ManagerOptions) (ctrl.Manager, error) {
	s, err := scheme.New()
	if err != nil {
		return nil, err
	}
	mopts := ctrl.Options{
		Scheme:                 s,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		LeaderElection:         false,
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	}
	if opts.Namespace != "" {
		mopts.Cache = cache.Options{DefaultNamespaces: map[string]cache.Config{opts.Namespace: {}}}
	}
	mgr, err := ctrl.NewManager(cfg, mopts)
	if err != nil {
		return nil, fmt.Errorf("create the controller manager: %w", err)
	}
	return mgr, nil
}
