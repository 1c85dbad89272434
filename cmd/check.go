package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/internal/classroom"
	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/internal/iostreams"
	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/checkkit"
	"github.com/operator-lab/lab/labs/workspace"
	"github.com/operator-lab/lab/operator/crds"
)

// CheckOptions are the arguments of `lab check`.
type CheckOptions struct {
	IO       *iostreams.IOStreams
	Lab      string
	Dir      string
	Exercise string
	JSON     bool
	Results  string
	JUnit    string
	// ClassroomOutput is a file the exercises' results for GitHub
	// Classroom are added to ($GITHUB_OUTPUT in a workflow).
	ClassroomOutput string
	Watch           bool
	// Lang is the --lang value, replaced by the language it chooses.
	Lang string
	// KeepBuild keeps the private build folder, for debugging a check.
	KeepBuild bool
	// Kubeconfig and Context grade on an existing cluster instead of a
	// local control plane.
	Kubeconfig, Context string
}

// NewCmdCheck is `lab check`; runF, if set, runs instead of the real work.
func NewCmdCheck(streams *iostreams.IOStreams, runF func(*CheckOptions) error) *cobra.Command {
	opts := &CheckOptions{IO: streams}
	c := &cobra.Command{
		Use:   "check [LAB]",
		Short: "Grade your workspace on a real control plane",
		Long: `check copies your workspace into a private build folder, adds the lab's
hidden checks and the observation layer, and runs them with go test against a
control plane (the one of 'lab env up' if it is running, else a private one).
Each exercise is reported as passed, failed (what was expected, what was
observed) or error (does not compile, panicked, timed out), with the next hint.
Your files are only read; the grades go to .lab/progress.json.
The exit status is 0 only when every checked exercise passes.`,
		Example: "  lab check\n  lab check 3.1 --exercise results\n  lab check --watch\n  lab check --json > results.json",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Lab = args[0]
			}
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runCheck(c.Context(), opts)
		},
	}
	f := c.Flags()
	addWorkspaceFlag(c, &opts.Dir)
	f.StringVar(&opts.Exercise, "exercise", "", "check only this exercise (id or number)")
	f.BoolVar(&opts.JSON, "json", false, "print Exercism results.json (v3) instead of the report")
	f.StringVar(&opts.Results, "results", "", "also write results.json to `FILE`")
	f.StringVar(&opts.JUnit, "junit", "", "also write JUnit XML to `FILE`")
	f.StringVar(&opts.ClassroomOutput, "classroom-output", "", "also add each exercise's result for GitHub Classroom to `FILE` (a workflow's $GITHUB_OUTPUT; see lab classroom init)")
	f.BoolVar(&opts.Watch, "watch", false, "check again on every save")
	f.BoolVar(&opts.KeepBuild, "keep-build", false, "keep the private build folder and print where it is")
	f.StringVar(&opts.Kubeconfig, "kubeconfig", "", "grade on the cluster of this kubeconfig instead of a local control plane (see the README: Grading on a shared cluster)")
	f.StringVar(&opts.Context, "context", "", "kubeconfig context to use (implies an existing cluster)")
	addLangFlag(c, &opts.Lang)
	return c
}

// validate checks the flags before anything is built or started.
func (o *CheckOptions) validate() error {
	if err := checkLabArg(o.Lab); err != nil {
		return err
	}
	if err := resolveLang(&o.Lang); err != nil {
		return err
	}
	if o.JSON && o.Watch {
		return errors.New("--json prints one results.json and --watch a report per save: use --watch with --results FILE instead")
	}
	if o.ClassroomOutput != "" && o.Watch {
		return errors.New("--classroom-output is for one graded run in CI: leave out --watch")
	}
	// A report file that cannot be written must not cost a whole check.
	for _, f := range []struct{ flag, path string }{{"--results", o.Results}, {"--junit", o.JUnit}, {"--classroom-output", o.ClassroomOutput}} {
		if f.path == "" {
			continue
		}
		if err := checkWritable(f.path); err != nil {
			return fmt.Errorf("%s: %w", f.flag, err)
		}
	}
	return nil
}

func runCheck(ctx context.Context, opts *CheckOptions) error {
	streams := opts.IO
	ref, err := workspace.Resolve(opts.Lab, opts.Dir)
	if err != nil {
		return err
	}
	var exercises []*labs.Exercise
	if opts.Exercise != "" {
		e, err := ref.Lab.Exercise(opts.Exercise)
		if err != nil {
			return err
		}
		exercises = []*labs.Exercise{e}
	}

	labCRDs, err := ref.Lab.CustomResourceDefinitions()
	if err != nil {
		return err
	}
	progress := func(s controlplane.Step) {
		fmt.Fprintf(streams.ErrOut, "control plane: %s (%s)\n", s, s.Took.Round(100*time.Millisecond))
	}
	var kubeconfig string
	if opts.Kubeconfig != "" || opts.Context != "" {
		cluster, err := prepareExternalCluster(ctx, opts, ref.Lab, labCRDs, progress)
		if err != nil {
			return err
		}
		defer cluster.Close()
		kubeconfig = cluster.Kubeconfig
	} else {
		cp, err := controlplane.Ensure(ctx, controlplane.Options{CRDs: labCRDs, SetupLog: streams.ErrOut, Progress: progress})
		if err != nil {
			return fmt.Errorf("start the control plane: %w", err)
		}
		defer func() { _ = cp.Stop() }()
		kubeconfig = cp.KubeconfigPath
	}

	check := func(only []*labs.Exercise) (bool, error) {
		return checkOnce(ctx, opts, ref, only, kubeconfig)
	}
	if opts.Watch {
		if exercises == nil {
			exercises = ref.Lab.Exercises
		}
		return checkOnEverySave(ctx, streams, ref, exercises, check)
	}
	passed, err := check(exercises)
	if err != nil {
		return err
	}
	if !passed {
		return exitError{code: 1}
	}
	return nil
}

// prepareExternalCluster readies a cluster lab did not start for the
// checks: it answers, the credentials have the rights the checks need, and
// the lab's CRDs are there (installed where absent; one of the same name
// with another definition is refused). The checks get a private copy of its
// kubeconfig, with the chosen context alone.
func prepareExternalCluster(ctx context.Context, opts *CheckOptions, lab *labs.Lab, labCRDs []*apiextensionsv1.CustomResourceDefinition, progress func(controlplane.Step)) (*controlplane.External, error) {
	cluster, err := controlplane.OpenExternal(ctx, opts.Kubeconfig, opts.Context)
	if err != nil {
		return nil, err
	}
	if err := checker.CheckRights(ctx, cluster.Config, lab); err != nil {
		cluster.Close()
		return nil, err
	}
	t := time.Now()
	created, err := crds.Install(ctx, cluster.Config, labCRDs...)
	if err != nil {
		cluster.Close()
		return nil, fmt.Errorf("lab's CRDs on %s: %w", cluster.Host, err)
	}
	detail := "present"
	if len(created) > 0 {
		detail = fmt.Sprintf("installed %d", len(created))
	}
	progress(controlplane.Step{Name: controlplane.StepCRDs, Detail: detail, Took: time.Since(t)})
	return cluster, nil
}

// watchDebounce gathers the burst of events one save makes (editors write,
// rename and chmod) into one check.
const watchDebounce = 300 * time.Millisecond

// checkOnEverySave checks the exercises now, and after every change of the
// workspace's sources those of them the change may affect
// (checker.Affected), until ctx ends. The watch begins first, so a save
// during the first check is checked too.
func checkOnEverySave(ctx context.Context, streams *iostreams.IOStreams, ref *workspace.Ref, exercises []*labs.Exercise, check func([]*labs.Exercise) (bool, error)) error {
	changes, err := workspace.Watch(ctx, ref.Dir, workspace.SourceFiles, watchDebounce)
	if err != nil {
		return err
	}
	if _, err := check(exercises); err != nil {
		return err
	}
	fmt.Fprintf(streams.ErrOut, "watching %s for changes (Ctrl-C to stop)\n", displayDir(ref.Dir))
	for changed := range changes {
		affected := checker.Affected(ref.Lab, ref.Dir, changed, exercises)
		fmt.Fprintf(streams.ErrOut, "changed: %s\n", describeChanges(changed))
		if len(affected) == 0 {
			fmt.Fprintln(streams.ErrOut, "no exercise's code or checks read the changed files: nothing to check again")
			continue
		}
		fmt.Fprintf(streams.Out, "\n%s\n", strings.Repeat("─", 60))
		if len(affected) < len(exercises) {
			ids := make([]string, len(affected))
			for i, e := range affected {
				ids[i] = e.ID
			}
			fmt.Fprintf(streams.ErrOut, "checking again what it may affect: %s\n", strings.Join(ids, ", "))
		}
		if _, err := check(affected); err != nil {
			fmt.Fprintf(streams.ErrOut, "lab: %v\n", err)
		}
	}
	return nil
}

// describeChanges names the changed files, the first few of them.
func describeChanges(changed []string) string {
	const shown = 4
	if len(changed) == 1 && changed[0] == "." {
		return "the workspace (the watch lost track of it)"
	}
	out := strings.Join(changed[:min(len(changed), shown)], ", ")
	if len(changed) > shown {
		out += fmt.Sprintf(" and %d more", len(changed)-shown)
	}
	return out
}

// checkOnce grades the workspace once, prints and writes the reports, and
// records the grades in the progress file.
func checkOnce(ctx context.Context, opts *CheckOptions, ref *workspace.Ref, exercises []*labs.Exercise, kubeconfig string) (bool, error) {
	streams := opts.IO
	progress, notice, err := workspace.LoadOrRebuildProgress(ref.Dir, ref.Lab.ID)
	if err != nil {
		return false, err
	}
	if notice != "" {
		fmt.Fprintf(streams.ErrOut, "lab: %s\n", notice)
	}
	points, err := workspace.Points(ref.Lab, ref.Dir)
	if err != nil {
		return false, err
	}
	if !opts.JSON {
		fmt.Fprintf(streams.ErrOut, "checking %s …\n", displayDir(ref.Dir))
	}
	report, err := checker.Check(ctx, checker.Options{
		Lab: ref.Lab, Dir: ref.Dir, Exercises: exercises, Kubeconfig: kubeconfig, KeepBuildDir: opts.KeepBuild,
		Log: streams.ErrOut, Points: points, Learner: learner(),
	})
	if err != nil {
		return false, err
	}
	if opts.JSON {
		err = report.WriteExercism(streams.Out)
	} else {
		err = report.WriteHuman(streams.Out, checker.HumanOptions{Lang: opts.Lang, Progress: progress})
	}
	if err != nil {
		return false, err
	}
	// The grades are kept whatever happens to the report files.
	report.Record(progress)
	var errs []error
	if err := workspace.SaveProgress(ref.Dir, progress); err != nil {
		errs = append(errs, fmt.Errorf("save progress: %w", err))
	}
	if opts.Results != "" {
		errs = append(errs, writeReportFile(opts.Results, report.WriteExercism))
	}
	if opts.JUnit != "" {
		errs = append(errs, writeReportFile(opts.JUnit, report.WriteJUnit))
	}
	if opts.ClassroomOutput != "" {
		// Added to, not replaced: a workflow's output file holds every step's.
		errs = append(errs, writeReportFileWith(opts.ClassroomOutput, os.O_WRONLY|os.O_CREATE|os.O_APPEND, func(w io.Writer) error {
			return classroom.WriteOutputs(w, report)
		}))
	}
	return report.Passed(), errors.Join(errs...)
}

// learner is who lab check grades, as the namespaces of its checks are
// labelled: $LAB_LEARNER, else the GitHub user in a workflow, else the
// user lab runs as.
func learner() string {
	for _, env := range []string{checkkit.LearnerEnv, "GITHUB_ACTOR"} {
		if v := os.Getenv(env); v != "" {
			return v
		}
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

// checkWritable says why a report file could not be written at name: its
// folder is missing or read-only, or name is a folder or a read-only file.
// It changes nothing on disk.
func checkWritable(name string) error {
	st, err := os.Stat(name)
	switch {
	case err == nil && st.IsDir():
		return fmt.Errorf("%s is a folder, not a file", name)
	case err == nil:
		f, err := os.OpenFile(name, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("cannot write %s: %w", name, err)
		}
		return f.Close()
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("cannot write %s: %w", name, err)
	}
	dir := filepath.Dir(name)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("cannot write %s: the folder %s does not exist", name, dir)
	}
	probe, err := os.CreateTemp(dir, ".lab-write-test-*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", name, err)
	}
	probe.Close()
	if err := os.Remove(probe.Name()); err != nil {
		return fmt.Errorf("cannot write %s: %w", name, err)
	}
	return nil
}

func writeReportFile(name string, write func(io.Writer) error) error {
	return writeReportFileWith(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, write)
}

// writeReportFileWith is writeReportFile with os.OpenFile's flags.
func writeReportFileWith(name string, flag int, write func(io.Writer) error) error {
	f, err := os.OpenFile(name, flag, 0o644)
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write report %s: %w", name, err)
	}
	return nil
}
