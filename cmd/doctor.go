package cmd

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/muesli/termenv"
	"github.com/spf13/cobra"

	"github.com/operator-lab/lab/internal/buildinfo"
	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/internal/iostreams"
	"github.com/operator-lab/lab/internal/proc"
)

// DoctorOptions are the flags of `lab doctor`.
type DoctorOptions struct {
	IO *iostreams.IOStreams
	// SkipStart leaves out the timed start and stop of a control plane.
	SkipStart bool
}

// NewCmdDoctor is `lab doctor`; runF, if set, runs instead of the real work.
func NewCmdDoctor(streams *iostreams.IOStreams, runF func(*DoctorOptions) error) *cobra.Command {
	opts := &DoctorOptions{IO: streams}
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Check the Go toolchain, control-plane binaries, a control-plane start, and the terminal",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runDoctor(c.Context(), opts)
		},
	}
	c.Flags().BoolVar(&opts.SkipStart, "skip-start", false, "do not start a control plane")
	return c
}

// checkResult is one line of the doctor's report; Fix is set for problems.
type checkResult struct {
	Name, Detail, Fix string
}

func runDoctor(ctx context.Context, opts *DoctorOptions) error {
	streams := opts.IO
	var results []checkResult
	results = append(results, checkGo())
	bins, binResult := checkBinaries()
	results = append(results, binResult)
	if !opts.SkipStart && binResult.Fix == "" {
		results = append(results, checkStart(ctx, bins))
	}
	results = append(results, checkEnvState())
	results = append(results, checkTerminal(streams)...)

	problems := 0
	for _, r := range results {
		mark := "ok "
		if r.Fix != "" {
			mark = "BAD"
			problems++
		}
		fmt.Fprintf(streams.Out, "[%s] %-14s %s\n", mark, r.Name, r.Detail)
		if r.Fix != "" {
			fmt.Fprintf(streams.Out, "      fix: %s\n", r.Fix)
		}
	}
	if problems > 0 {
		fmt.Fprintf(streams.Out, "%d problem(s) found\n", problems)
		return exitError{code: 1}
	}
	fmt.Fprintln(streams.Out, "everything lab needs is in place")
	return nil
}

func checkGo() checkResult {
	r := checkResult{Name: "go toolchain"}
	goBin, err := exec.LookPath("go")
	if err != nil {
		r.Detail = "not found on PATH"
		r.Fix = "install Go 1.26 or newer from https://go.dev/dl/ (lab check builds your code with it)"
		return r
	}
	out, err := proc.Command(context.Background(), goBin, "version").Output()
	if err != nil {
		r.Detail = goBin + " does not run: " + err.Error()
		r.Fix = "reinstall Go from https://go.dev/dl/"
		return r
	}
	r.Detail = strings.TrimSpace(string(out)) + " (" + goBin + ")"
	return r
}

func checkBinaries() (controlplane.Binaries, checkResult) {
	r := checkResult{Name: "control plane"}
	bins, err := controlplane.Find()
	if err != nil {
		r.Detail = err.Error()
		r.Fix = "run `lab setup` (downloads or builds them once, into the setup-envtest store)"
		return bins, r
	}
	var versions []string
	for _, name := range []string{"kube-apiserver", "etcd"} {
		v, err := controlplane.BinaryVersion(bins.Path(name))
		if err != nil {
			r.Detail = fmt.Sprintf("%s in %s does not run: %v", name, bins.Dir, err)
			r.Fix = controlplane.RebuildAdvice(bins)
			return bins, r
		}
		versions = append(versions, name+" "+v)
	}
	r.Detail = fmt.Sprintf("%s in %s (from %s)", strings.Join(versions, ", "), bins.Dir, bins.Source)
	if !strings.Contains(versions[0], "v"+buildinfo.KubernetesVersion[:strings.LastIndex(buildinfo.KubernetesVersion, ".")]) {
		r.Fix = fmt.Sprintf("lab expects Kubernetes %s: run `lab setup --from-source`, or point KUBEBUILDER_ASSETS at 1.37 binaries", buildinfo.KubernetesVersion)
	}
	return bins, r
}

func checkStart(ctx context.Context, bins controlplane.Binaries) checkResult {
	r := checkResult{Name: "start/stop"}
	t := time.Now()
	cp, err := controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		r.Detail = err.Error()
		r.Fix = "see the error above; `lab setup --from-source` rebuilds broken binaries"
		return r
	}
	started := time.Since(t)
	t = time.Now()
	if err := cp.Stop(); err != nil {
		r.Detail = err.Error()
		r.Fix = "a control-plane process did not stop; check for leftover etcd/kube-apiserver processes"
		return r
	}
	r.Detail = fmt.Sprintf("started %s at %s in %s, stopped in %s", cp.KubernetesVersion, cp.Host,
		started.Round(10*time.Millisecond), time.Since(t).Round(10*time.Millisecond))
	return r
}

// checkEnvState reads the state of `lab env up`: a corrupt state file
// breaks lab start, run and check, so it is a problem with its fix.
func checkEnvState() checkResult {
	r := checkResult{Name: "lab env"}
	st, err := controlplane.ReadState()
	switch {
	case err == nil:
		r.Detail = fmt.Sprintf("a background control plane runs at %s (pid %d); lab start, run and check use it", st.Host, st.PID)
	case errors.Is(err, controlplane.ErrNotRunning):
		r.Detail = err.Error() + "; lab start, run and check start their own"
	case errors.Is(err, controlplane.ErrCorruptState):
		r.Detail = err.Error()
		r.Fix = "run `lab env down`: it removes the corrupt state file"
	default:
		r.Detail = err.Error()
		r.Fix = "fix the state directory named above, or set LAB_STATE_DIR to a private directory of your own"
	}
	return r
}

// colourNames say what each colour profile shows.
var colourNames = map[termenv.Profile]string{termenv.TrueColor: "true colour", termenv.ANSI256: "256 colours",
	termenv.ANSI: "16 colours", termenv.Ascii: "no colour (NO_COLOR, CLICOLOR=0 or TERM says so)"}

func checkTerminal(streams *iostreams.IOStreams) []checkResult {
	r := checkResult{Name: "terminal"}
	if !streams.IsStdoutTTY() {
		r.Detail = "not a terminal: lab start shows plain text instead of the live UI"
		return []checkResult{r}
	}
	w, h, ok := streams.TerminalSize()
	r.Detail = fmt.Sprintf("%dx%d, %s", w, h, colourNames[streams.ColorProfile()])
	if ok && (w < 80 || h < 24) {
		r.Fix = "lab start needs at least 80x24: enlarge the window"
	}
	return []checkResult{r}
}
