// Command lab is an interactive learning lab for Kubernetes operators built
// with controller-runtime: a real local control plane, a reference operator to
// watch, and graded exercises.
package main

import (
	"os"

	"github.com/operator-lab/lab/cmd"
)

func main() {
	os.Exit(cmd.Main())
}
