package cmd

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/operator-lab/lab/internal/buildinfo"
)

func newVersionCmd(streams IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print lab's version and the Kubernetes version of its control plane",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			fmt.Fprintf(streams.Out, "lab %s\n", buildinfo.Version)
			fmt.Fprintf(streams.Out, "control plane: Kubernetes v%s (etcd %s when built by lab)\n", buildinfo.KubernetesVersion, buildinfo.EtcdVersion)
			fmt.Fprintf(streams.Out, "controller-runtime %s, %s\n", moduleVersion("sigs.k8s.io/controller-runtime"), runtime.Version())
			return nil
		},
	}
}

// moduleVersion reports the version of a dependency lab was built with.
func moduleVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, dep := range info.Deps {
		if dep.Path == path {
			return dep.Version
		}
	}
	return "unknown"
}
