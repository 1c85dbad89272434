// Package cmd holds lab's cobra commands. Each verb lives in its own file,
// in gh's shape: an Options struct that carries the command's IOStreams, a
// NewCmdX(streams, runF) constructor that parses and checks the flags into
// it (a test's runF receives them instead of the run), and a run function
// that tests can call directly. The commands only parse flags, call into
// the packages that do the work, and print; what the terminal is (TTY,
// colour, width, pager) is asked of internal/iostreams.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/operator-lab/lab/internal/buildinfo"
	"github.com/operator-lab/lab/internal/iostreams"
	"github.com/operator-lab/lab/internal/proc"
)

// exitError carries a specific exit code (for example lab doctor's "problems
// found") without printing anything more than the command already did.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// Main runs lab with the process arguments and returns the exit code.
func Main() int {
	if code, ok := proc.RunIfSupervisor(); ok {
		return code
	}
	// Everything temporary (envtest's etcd data and keys, go's build
	// folders) goes into a folder of this process's own, removed at the
	// end, or at the next start if lab is killed.
	_, removeTemp, err := proc.UsePrivateTempDir()
	if err != nil {
		fmt.Fprintf(os.Stderr, "lab: warning: %v; temporary files go to %s\n", err, os.TempDir())
	}
	defer removeTemp()
	streams := iostreams.System()
	restoreTerminal := streams.SaveTerminal()
	lastResort = func(code int) {
		restoreTerminal()
		removeTemp()
		os.Exit(code)
	}
	ctx, stop := stopContext()
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
	code := runGuarded(os.Stderr, func() int { return Execute(ctx, streams, os.Args[1:]) })
	if code == exitInternalError {
		restoreTerminal() // a panic may have left the live view's raw mode
	}
	return code
}

// lastResort ends lab at once, when it cannot stop the normal way (a stop
// that hangs, a panic off the main goroutine): Main makes it restore the
// terminal and remove lab's temp folder first. The children need nothing:
// they die with lab (see package proc).
var lastResort = os.Exit

// stopSignals end lab the way Ctrl-C does: an interrupt, a kill, or the
// terminal going away.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// stopDeadline is how long lab may take to stop after a stop signal
// before it gives up stopping cleanly; a second signal ends it at once.
const stopDeadline = 15 * time.Second

// stopContext is cancelled by the first stop signal (its cause names the
// signal). lab is the only owner of these signals — the live view runs
// without bubbletea's own handler — so nothing races to handle one. If
// stopping then hangs, or another signal comes, lab exits anyway with
// 128+signal (see lastResort). A signal lab was started ignoring (nohup)
// stays ignored.
func stopContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	for _, s := range stopSignals {
		if !signal.Ignored(s) {
			signal.Notify(sigs, s)
		}
	}
	done := make(chan struct{})
	go func() {
		var first stopSignal
		select {
		case sig := <-sigs:
			first = stopSignal{sig}
			cancel(first)
		case <-done:
			return
		}
		select {
		case <-sigs:
		case <-time.After(stopDeadline):
		case <-done:
			return
		}
		fmt.Fprintln(os.Stderr, "lab: not stopped cleanly in time; exiting now")
		lastResort(first.exitCode())
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			close(done)
			signal.Stop(sigs)
			cancel(nil)
		})
	}
}

// stopSignal is the cause of a context cancelled by a stop signal.
type stopSignal struct{ sig os.Signal }

func (s stopSignal) Error() string { return s.sig.String() + " signal received" }

// exitCode is the exit status a shell shows for a process ended by the
// signal: 128 + its number (130 for Ctrl-C, 143 for SIGTERM).
func (s stopSignal) exitCode() int {
	if n, ok := s.sig.(syscall.Signal); ok {
		return proc.SignalExitCode(n)
	}
	return proc.SignalExitCode(syscall.SIGINT)
}

// interruptedExit is the exit status for a command cut short by ctx's stop
// signal (130 when the cause is not one).
func interruptedExit(ctx context.Context) exitError {
	var s stopSignal
	if errors.As(context.Cause(ctx), &s) {
		return exitError{code: s.exitCode()}
	}
	return exitError{code: proc.SignalExitCode(syscall.SIGINT)}
}

// exitInternalError is the exit code of a bug in lab (as sysexits' EX_SOFTWARE).
const exitInternalError = 70

// runGuarded runs lab and turns a panic into one line on errOut and a file
// with the details, instead of a stack trace on the learner's terminal.
func runGuarded(errOut io.Writer, run func() int) (code int) {
	defer func() {
		if r := recover(); r != nil {
			reportCrash(errOut, r)
			code = exitInternalError
		}
	}()
	return run()
}

// goGuarded runs fn in a goroutine; a panic there is reported like one in
// the main goroutine, and ends lab.
func goGuarded(fn func()) {
	go func() {
		defer func() {
			if r := recover(); r != nil {
				reportCrash(os.Stderr, r)
				lastResort(exitInternalError)
			}
		}()
		fn()
	}()
}

// reportCrash writes a panic's stack to a crash file and one line to errOut.
func reportCrash(errOut io.Writer, r any) {
	report := fmt.Sprintf("lab %s panicked: %v\n\n%s", buildinfo.Version, r, debug.Stack())
	f, err := os.CreateTemp(crashDir(), "lab-crash-*.txt")
	if err != nil {
		fmt.Fprintf(errOut, "lab: internal error: %v (please report it)\n", r)
		return
	}
	_, _ = f.WriteString(report)
	_ = f.Close()
	fmt.Fprintf(errOut, "lab: internal error: %v; please report it with %s\n", r, f.Name())
}

// crashDir keeps crash reports where they outlive the private temp folder.
func crashDir() string {
	if dir, err := os.UserCacheDir(); err == nil {
		dir = filepath.Join(dir, "lab")
		if os.MkdirAll(dir, 0o700) == nil {
			return dir
		}
	}
	return os.TempDir()
}

// Execute runs lab with the given arguments and streams and returns the exit code.
func Execute(ctx context.Context, streams *iostreams.IOStreams, args []string) int {
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
func NewRootCmd(streams *iostreams.IOStreams) *cobra.Command {
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
	// Every verb lab has (help lists them sorted by name).
	root.AddCommand(
		NewCmdStart(streams, nil), NewCmdRun(streams, nil), NewCmdReplay(streams, nil), NewCmdRead(streams, nil),
		NewCmdInit(streams, nil), NewCmdList(streams, nil), NewCmdCheck(streams, nil), NewCmdHint(streams, nil),
		NewCmdSolution(streams, nil), NewCmdReset(streams, nil), NewCmdClean(streams, nil),
		NewCmdSetup(streams, nil), NewCmdEnv(streams), NewCmdDoctor(streams, nil), NewCmdVersion(streams, nil),
		NewCmdClassroom(streams, nil),
	)
	root.AddCommand(newCmdBuildChecks())
	root.AddCommand(testCommands...)
	return root
}

// testCommands are hidden commands this package's tests add to the lab
// they run, to make it crash on purpose; lab itself has none.
var testCommands []*cobra.Command
