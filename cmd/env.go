package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/internal/iostreams"
	"github.com/operator-lab/lab/operator/crds"
)

// NewCmdEnv is `lab env` and its verbs.
func NewCmdEnv(streams *iostreams.IOStreams) *cobra.Command {
	c := &cobra.Command{
		Use:   "env",
		Short: "Keep a control plane running in the background for other lab commands (and kubectl)",
		Long: `env manages a long-lived local control plane. While it runs, lab start, lab run
and lab check reuse it instead of starting their own, which is much faster,
and you can inspect it with kubectl --kubeconfig "$(lab env kubeconfig)".`,
	}
	c.AddCommand(NewCmdEnvUp(streams, nil), NewCmdEnvDown(streams, nil), NewCmdEnvStatus(streams, nil), NewCmdEnvKubeconfig(streams, nil))
	return c
}

// EnvUpOptions are the flags of `lab env up`.
type EnvUpOptions struct {
	IO         *iostreams.IOStreams
	Foreground bool
}

// EnvOptions are the arguments of `lab env down`, `status` and `kubeconfig`
// (none but the streams).
type EnvOptions struct {
	IO *iostreams.IOStreams
}

// NewCmdEnvUp is `lab env up`; runF, if set, runs instead of the real work.
func NewCmdEnvUp(streams *iostreams.IOStreams, runF func(*EnvUpOptions) error) *cobra.Command {
	opts := &EnvUpOptions{IO: streams}
	c := &cobra.Command{
		Use:   "up",
		Short: "Start the background control plane (with lab's CRDs installed)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runEnvUp(c.Context(), opts)
		},
	}
	c.Flags().BoolVar(&opts.Foreground, "foreground", false, "run in this terminal until interrupted instead of in the background")
	return c
}

func controlPlaneOptions(streams *iostreams.IOStreams) (controlplane.Options, error) {
	all, err := crds.All()
	if err != nil {
		return controlplane.Options{}, fmt.Errorf("load lab's CRDs: %w", err)
	}
	return controlplane.Options{CRDs: all, SetupLog: streams.ErrOut}, nil
}

func runEnvUp(ctx context.Context, opts *EnvUpOptions) error {
	streams := opts.IO
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

func printState(streams *iostreams.IOStreams, st *controlplane.State) {
	fmt.Fprintf(streams.Out, "control plane: %s (Kubernetes %s), pid %d, up %s\n",
		st.Host, st.KubernetesVersion, st.PID, time.Since(st.StartedAt).Round(time.Second))
	fmt.Fprintf(streams.Out, "kubeconfig:    %s\n", st.Kubeconfig)
}

// NewCmdEnvDown is `lab env down`; runF, if set, runs instead of the real work.
func NewCmdEnvDown(streams *iostreams.IOStreams, runF func(*EnvOptions) error) *cobra.Command {
	return newEnvVerb(streams, runF, runEnvDown, &cobra.Command{
		Use:   "down",
		Short: "Stop the background control plane",
	})
}

func runEnvDown(ctx context.Context, opts *EnvOptions) error {
	err := controlplane.Down(ctx, opts.IO.Out)
	if errors.Is(err, controlplane.ErrNotRunning) {
		// Says too whether a stale state file was removed.
		fmt.Fprintln(opts.IO.Out, err.Error())
		return nil
	}
	return err
}

// NewCmdEnvStatus is `lab env status`; runF, if set, runs instead of the real work.
func NewCmdEnvStatus(streams *iostreams.IOStreams, runF func(*EnvOptions) error) *cobra.Command {
	return newEnvVerb(streams, runF, runEnvStatus, &cobra.Command{
		Use:   "status",
		Short: "Show whether the background control plane runs, where, and for how long",
	})
}

func runEnvStatus(_ context.Context, opts *EnvOptions) error {
	st, err := controlplane.ReadState()
	if errors.Is(err, controlplane.ErrNotRunning) {
		fmt.Fprintln(opts.IO.Out, err.Error())
		return exitError{code: 3}
	}
	if err != nil {
		return err
	}
	printState(opts.IO, st)
	return nil
}

// NewCmdEnvKubeconfig is `lab env kubeconfig`; runF, if set, runs instead of the real work.
func NewCmdEnvKubeconfig(streams *iostreams.IOStreams, runF func(*EnvOptions) error) *cobra.Command {
	return newEnvVerb(streams, runF, runEnvKubeconfig, &cobra.Command{
		Use:   "kubeconfig",
		Short: "Print the kubeconfig path of the background control plane",
		Long:  `Use it with kubectl, e.g.: kubectl --kubeconfig "$(lab env kubeconfig)" get databases -A -w`,
	})
}

func runEnvKubeconfig(_ context.Context, opts *EnvOptions) error {
	st, err := controlplane.ReadState()
	if err != nil {
		return err
	}
	fmt.Fprintln(opts.IO.Out, st.Kubeconfig)
	return nil
}

// newEnvVerb completes c, an env verb without flags or arguments, to run
// runF or else run.
func newEnvVerb(streams *iostreams.IOStreams, runF func(*EnvOptions) error, run func(context.Context, *EnvOptions) error, c *cobra.Command) *cobra.Command {
	opts := &EnvOptions{IO: streams}
	c.Args = cobra.NoArgs
	c.RunE = func(c *cobra.Command, _ []string) error {
		if runF != nil {
			return runF(opts)
		}
		return run(c.Context(), opts)
	}
	return c
}
