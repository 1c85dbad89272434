package observe

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/operator-lab/lab/internal/controlplane"
)

// The control plane is started on first use, so unit tests and in-process
// benchmarks do not pay for it, and stopped once all tests have run.
var shared struct {
	once sync.Once
	cp   *controlplane.ControlPlane
	err  error
}

func TestMain(m *testing.M) {
	// controller-runtime warns (with a stack trace) when no logger is set;
	// the tests assert on events, not logs.
	logf.SetLogger(logr.Discard())
	code := m.Run()
	if shared.cp != nil {
		if err := shared.cp.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop control plane:", err)
		}
	}
	os.Exit(code)
}

// controlPlane returns the package's control plane, starting it if needed.
func controlPlane(t testing.TB) *rest.Config {
	t.Helper()
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		shared.cp, shared.err = controlplane.Start(ctx, controlplane.Options{})
	})
	if shared.err != nil {
		t.Fatalf("start control plane (KUBEBUILDER_ASSETS=%q): %v", os.Getenv("KUBEBUILDER_ASSETS"), shared.err)
	}
	return shared.cp.Config
}
