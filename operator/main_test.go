package operator_test

import (
	"os"
	"testing"

	"github.com/operator-lab/lab/operator/internal/optest"
)

func TestMain(m *testing.M) { os.Exit(optest.Main(m)) }
