// Package cmd holds lab's cobra commands. Each verb lives in its own file
// with an Options struct and a run function that tests can call directly;
// the commands only parse flags, call into the packages that do the work,
// and print.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// IOStreams are the standard streams a command uses, injectable so tests can
// capture output and pretend to be (or not be) a terminal.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// StdStreams returns the process's own streams.
func StdStreams() IOStreams {
	return IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
}

// exitError carries a specific exit code (for example lab doctor's "problems
// found") without printing anything more than the command already did.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// Main runs lab with the process arguments and returns the exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// controller-runtime's own logs would bury lab's output; what the
	// operator does is shown as events. LAB_DEBUG=1 brings them back.
	if os.Getenv("LAB_DEBUG") != "" {
		ctrllog.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true)))
	} else {
		ctrllog.SetLogger(logr.Discard())
		// client-go warnings would otherwise land on the live UI's screen.
		klog.SetLogger(logr.Discard())
	}
	return Execute(ctx, StdStreams(), os.Args[1:])
}

// Execute runs lab with the given arguments and streams and returns the exit code.
func Execute(ctx context.Context, streams IOStreams, args []string) int {
	root := NewRootCmd(streams)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var exit exitError
	if errors.As(err, &exit) {
		return exit.code
	}
	fmt.Fprintf(streams.ErrOut, "lab: %v\n", err)
	return 1
}

// NewRootCmd builds the command tree.
func NewRootCmd(streams IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:   "lab",
		Short: "An interactive lab for learning controller-runtime on a real control plane",
		Long: `lab runs a real local Kubernetes control plane (etcd + kube-apiserver),
a reference operator you can watch reconcile live, and graded exercises
for the controller-runtime lessons 3.1 and 4.4.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())
	})
	for _, add := range commands {
		root.AddCommand(add(streams))
	}
	return root
}

// commands lists every verb; each file adds its constructor in init so the
// tree only ever holds commands that exist.
var commands []func(IOStreams) *cobra.Command

func register(newCmd func(IOStreams) *cobra.Command) {
	commands = append(commands, newCmd)
}
