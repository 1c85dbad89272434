package learnerctl

import (
	"os"
	"testing"

	"github.com/operator-lab/lab/internal/proc"
)

// TestMain lets this test binary supervise the children that the commands
// it runs in-process start (see package proc).
func TestMain(m *testing.M) {
	if code, ok := proc.RunIfSupervisor(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}
