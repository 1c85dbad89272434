package cmd

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/internal/proc"
	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/workspace"
)

// buildChecksCommand is the hidden command lab runs in the background.
const buildChecksCommand = "build-checks"

// newCmdBuildChecks is the hidden `lab build-checks LAB DIR`: the build
// `lab init` and `lab start` leave running in the background (see
// buildChecksDetached and buildChecksWhile). It prints nothing; a failure
// is the next check's to report.
func newCmdBuildChecks() *cobra.Command {
	return &cobra.Command{
		Use:    buildChecksCommand + " LAB DIR",
		Short:  "Build the checks of a workspace ahead of lab check",
		Hidden: true,
		Args:   cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			lab, err := labs.Get(args[0])
			if err != nil {
				return err
			}
			return checker.Warm(c.Context(), lab, args[1])
		},
	}
}

// The background build of the checks runs in a process of low priority,
// so the first `lab check` finds the checks built (a check started
// meanwhile waits for it, then only links what changed). It is best
// effort: a build that cannot start changes nothing but that check's
// speed.

// buildChecksWhile builds the workspace's checks until stop is called
// (`lab start`, when it ends), and dies with lab however lab ends. stop
// asks the build to end as lab is asked to (SIGTERM), so that it removes
// its temp folder, and waits for it a moment.
func buildChecksWhile(lab *labs.Lab, dir string) (stop func()) {
	args := backgroundBuildArgs(lab, dir)
	if args == nil {
		return func() {}
	}
	cmd := proc.Command(context.Background(), args[0], args[1:]...)
	if err := cmd.Start(); err != nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	return func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(buildStopGrace):
			_ = proc.Kill(cmd)
		}
	}
}

// buildStopGrace is how long a background build may take to end when
// asked to, before it is killed.
const buildStopGrace = 3 * time.Second

// buildChecksDetached builds the workspace's checks in a process of its
// own session, which ends by itself once they are built (`lab init`,
// which returns at once). It says whether the build started.
func buildChecksDetached(lab *labs.Lab, dir string) bool {
	args := backgroundBuildArgs(lab, dir)
	if args == nil {
		return false
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return false
	}
	go func() { _ = cmd.Wait() }()
	return true
}

// backgroundBuildArgs is the command line of the background build, nil
// when there is to be none.
func backgroundBuildArgs(lab *labs.Lab, dir string) []string {
	if os.Getenv(workspace.BackgroundBuildEnv) == "off" {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	args := []string{exe, buildChecksCommand, lab.ID, abs}
	// nice sets the priority before lab starts: every compiler and linker
	// the go command starts inherits it.
	if nice, err := exec.LookPath("nice"); err == nil {
		args = append([]string{nice, "-n", "19"}, args...)
	}
	return args
}
