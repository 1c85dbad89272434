package controlplane

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/internal/proc"
)

func TestMain(m *testing.M) {
	if code, ok := proc.RunIfSupervisor(); ok {
		os.Exit(code)
	}
	// envtest logs through controller-runtime's logger; without one it
	// prints a warning with a stack trace.
	ctrllog.SetLogger(logr.Discard())
	code := m.Run()
	labtest.RemoveBinary()
	os.Exit(code)
}
