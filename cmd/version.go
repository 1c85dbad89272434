package cmd

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/operator-lab/lab/internal/buildinfo"
	"github.com/operator-lab/lab/internal/iostreams"
)

// VersionOptions are the arguments of `lab version` (none but the streams).
type VersionOptions struct {
	IO *iostreams.IOStreams
}

// NewCmdVersion is `lab version`; runF, if set, runs instead of the real work.
func NewCmdVersion(streams *iostreams.IOStreams, runF func(*VersionOptions) error) *cobra.Command {
	opts := &VersionOptions{IO: streams}
	return &cobra.Command{
		Use:   "version",
		Short: "Print lab's version and the Kubernetes version of its control plane",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runVersion(opts)
		},
	}
}

func runVersion(opts *VersionOptions) error {
	out := opts.IO.Out
	fmt.Fprintf(out, "lab %s\n", buildinfo.Version)
	fmt.Fprintf(out, "control plane: Kubernetes v%s (etcd %s when built by lab)\n", buildinfo.KubernetesVersion, buildinfo.EtcdVersion)
	fmt.Fprintf(out, "controller-runtime %s, %s\n", moduleVersion("sigs.k8s.io/controller-runtime"), runtime.Version())
	return nil
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
