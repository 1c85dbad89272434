package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/operator/crds"
)

func newEnvCmd(streams IOStreams) *cobra.Command {
	c := &cobra.Command{
		Use:   "env",
		Short: "Keep a control plane running in the background for other lab commands (and kubectl)",
		Long: `env manages a long-lived local control plane. While it runs, lab start, lab run
and lab check reuse it instead of starting their own, which is much faster,
and you can inspect it with kubectl --kubeconfig "$(lab env kubeconfig)".`,
	}
	c.AddCommand(newEnvUpCmd(streams), newEnvDownCmd(streams), newEnvStatusCmd(streams), newEnvKubeconfigCmd(streams))
	return c
}

// EnvUpOptions are the flags of `lab env up`.
type EnvUpOptions struct {
	Foreground bool
}

func newEnvUpCmd(streams IOStreams) *cobra.Command {
	var opts EnvUpOptions
	c := &cobra.Command{
		Use:   "up",
		Short: "Start the background control plane (with lab's CRDs installed)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runEnvUp(c.Context(), streams, opts)
		},
	}
	c.Flags().BoolVar(&opts.Foreground, "foreground", false, "run in this terminal until interrupted instead of in the background")
	return c
}

func controlPlaneOptions(streams IOStreams) (controlplane.Options, error) {
	all, err := crds.All()
	if err != nil {
		return controlplane.Options{}, fmt.Errorf("load lab's CRDs: %w", err)
	}
	return controlplane.Options{CRDs: all, SetupLog: streams.ErrOut}, nil
}

func runEnvUp(ctx context.Context, streams IOStreams, opts EnvUpOptions) error {
	cpOpts, err := controlPlaneOptions(streams)
	if err != nil {
		return err
	}
	if opts.Foreground {
		return controlplane.Serve(ctx, cpOpts, func(st *controlplane.State) {
			printState(streams, st)
			fmt.Fprintln(streams.Out, "running until interrupted (Ctrl-C)")
		})
	}
	// The background process needs the binaries; obtaining them here shows
	// the progress to the user instead of hiding it in a log file.
	if _, err := controlplane.Setup(ctx, controlplane.SetupOptions{Log: streams.ErrOut}); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("locate the lab executable: %w", err)
	}
	st, err := controlplane.Up(ctx, exe)
	if err != nil {
		return err
	}
	printState(streams, st)
	fmt.Fprintln(streams.Out, "stop it with: lab env down")
	return nil
}

func printState(streams IOStreams, st *controlplane.State) {
	fmt.Fprintf(streams.Out, "control plane: %s (Kubernetes %s), pid %d, up %s\n",
		st.Host, st.KubernetesVersion, st.PID, time.Since(st.StartedAt).Round(time.Second))
	fmt.Fprintf(streams.Out, "kubeconfig:    %s\n", st.Kubeconfig)
}

func newEnvDownCmd(streams IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "down",
		Short: "Stop the background control plane",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			err := controlplane.Down(c.Context(), streams.Out)
			if errors.Is(err, controlplane.ErrNotRunning) {
				// Says too whether a stale state file was removed.
				fmt.Fprintln(streams.Out, err.Error())
				return nil
			}
			return err
		},
	}
}

func newEnvStatusCmd(streams IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show whether the background control plane runs, where, and for how long",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			st, err := controlplane.ReadState()
			if errors.Is(err, controlplane.ErrNotRunning) {
				fmt.Fprintln(streams.Out, err.Error())
				return exitError{code: 3}
			}
			if err != nil {
				return err
			}
			printState(streams, st)
			return nil
		},
	}
}

func newEnvKubeconfigCmd(streams IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "kubeconfig",
		Short: "Print the kubeconfig path of the background control plane",
		Long:  `Use it with kubectl, e.g.: kubectl --kubeconfig "$(lab env kubeconfig)" get databases -A -w`,
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			st, err := controlplane.ReadState()
			if err != nil {
				return err
			}
			fmt.Fprintln(streams.Out, st.Kubeconfig)
			return nil
		},
	}
}
