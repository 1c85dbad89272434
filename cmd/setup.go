package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/internal/iostreams"
)

// SetupOptions are the flags of `lab setup`.
type SetupOptions struct {
	IO         *iostreams.IOStreams
	FromSource bool
	PrintPath  bool
	IndexURL   string
}

// NewCmdSetup is `lab setup`; runF, if set, runs instead of the real work.
func NewCmdSetup(streams *iostreams.IOStreams, runF func(*SetupOptions) error) *cobra.Command {
	opts := &SetupOptions{IO: streams}
	c := &cobra.Command{
		Use:   "setup",
		Short: "Find, download or build the control-plane binaries (etcd, kube-apiserver, kubectl)",
		Long: `setup makes sure the control-plane binaries for lab's Kubernetes version exist.
It looks in $KUBEBUILDER_ASSETS, then in the setup-envtest store, then downloads
them from the envtest release index, and otherwise builds them from Go module
sources (15–20 minutes on 2 cores, once). What it obtains goes into the
setup-envtest store, where setup-envtest and kubebuilder projects find it too.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runSetup(c.Context(), opts)
		},
	}
	c.Flags().BoolVar(&opts.FromSource, "from-source", false, "build from Go module sources even if binaries exist or can be downloaded")
	c.Flags().BoolVar(&opts.PrintPath, "print-path", false, "print only the binaries' directory (for KUBEBUILDER_ASSETS)")
	c.Flags().StringVar(&opts.IndexURL, "index-url", "", "envtest release index to download from (\"none\" to skip downloading)")
	return c
}

func runSetup(ctx context.Context, opts *SetupOptions) error {
	streams := opts.IO
	log := streams.ErrOut
	bins, err := controlplane.Setup(ctx, controlplane.SetupOptions{FromSource: opts.FromSource, IndexURL: opts.IndexURL, Log: log})
	if err != nil {
		return err
	}
	if opts.PrintPath {
		fmt.Fprintln(streams.Out, bins.Dir)
		return nil
	}
	fmt.Fprintf(streams.Out, "control-plane binaries: %s (%s)\n", bins.Dir, bins.Source)
	fmt.Fprintf(streams.Out, "use them elsewhere with: export KUBEBUILDER_ASSETS=%s\n", bins.Dir)
	return nil
}
