package cmd

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/operator-lab/lab/content"
	"github.com/operator-lab/lab/internal/iostreams"
	"github.com/operator-lab/lab/internal/labtest"
)

// The mapping from command lines to Options, through each command's runF:
// nothing runs, so no control plane is needed.

// parseCmd reads the command line args with the command newCmd makes,
// whose runF keeps the options it is given. It returns them (nil when the
// command line was refused before the run) and the command's error.
func parseCmd[O any](t *testing.T, newCmd func(*iostreams.IOStreams, func(*O) error) *cobra.Command, args ...string) (*O, error) {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	var got *O
	c := newCmd(ios, func(o *O) error {
		got = o
		return nil
	})
	c.SetArgs(args)
	c.SetOut(io.Discard)
	c.SetErr(io.Discard)
	c.SilenceUsage, c.SilenceErrors = true, true
	err := c.ExecuteContext(context.Background())
	if got != nil && streamsOf(got) != ios {
		t.Errorf("%s: the options do not carry the command's streams", strings.Join(args, " "))
	}
	return got, err
}

// streamsOf is the IO field of any Options struct.
func streamsOf(opts any) *iostreams.IOStreams {
	switch o := opts.(type) {
	case *StartOptions:
		return o.IO
	case *RunOptions:
		return o.IO
	case *CheckOptions:
		return o.IO
	case *InitOptions:
		return o.IO
	case *ResetOptions:
		return o.IO
	case *ReplayOptions:
		return o.IO
	case *EnvUpOptions:
		return o.IO
	}
	return nil
}

// mustParse is parseCmd for a command line that must reach the run.
func mustParse[O any](t *testing.T, newCmd func(*iostreams.IOStreams, func(*O) error) *cobra.Command, args ...string) *O {
	t.Helper()
	opts, err := parseCmd(t, newCmd, args...)
	if err != nil || opts == nil {
		t.Fatalf("%s: %v (run reached: %v)", strings.Join(args, " "), err, opts != nil)
	}
	return opts
}

// refused checks that each command line is refused before the run, saying want.
func refused[O any](t *testing.T, newCmd func(*iostreams.IOStreams, func(*O) error) *cobra.Command, cases map[string]string) {
	t.Helper()
	for line, want := range cases {
		opts, err := parseCmd(t, newCmd, strings.Fields(line)...)
		if err == nil || !strings.Contains(err.Error(), want) || opts != nil {
			t.Errorf("%q: err = %v (run reached: %v), want it refused saying %q", line, err, opts != nil, want)
		}
	}
}

func TestStartFlags(t *testing.T) {
	labtest.Hermetic(t)
	dir := filepath.Join(t.TempDir(), "ws")
	o := mustParse(t, NewCmdStart, "4.4", "--set", "requeue=error,timescale=10", "--set", "external=down",
		"--lang", "ru", "--plain", "--dir", dir, "--kubeconfig", "kc", "--context", "ctx")
	if o.Lab != "4.4" || !slices.Equal(o.Set, []string{"requeue=error,timescale=10", "external=down"}) || o.Lang != "ru" ||
		!o.Plain || o.Dir != dir || o.Kubeconfig != "kc" || o.Context != "ctx" || o.Mine {
		t.Errorf("lab start with every flag: %+v", o)
	}
	if o.setText() != "requeue=error,timescale=10,external=down" {
		t.Errorf("--set twice reaches the switches as %q", o.setText())
	}

	t.Setenv(content.LangEnv, "ru")
	o = mustParse(t, NewCmdStart, "3.1", "--mine")
	if o.Lab != "3.1" || !o.Mine || o.Plain || o.Dir != "" || o.Set != nil || o.Lang != "ru" {
		t.Errorf("lab start 3.1 --mine (LAB_LANG=ru): %+v", o)
	}

	refused(t, NewCmdStart, map[string]string{
		"":                 "accepts 1 arg(s), received 0",
		"3.1 4.4":          "accepts 1 arg(s), received 2",
		"4.4 --plain=soon": `invalid argument "soon" for "--plain"`,
		"4.4 --color":      "unknown flag: --color",
		// Lab 3.1's controller calls its dependency directly: no breaker.
		"3.1 --set breaker=on": "switch breaker belongs to lab 4.4; lab 3.1's controller does not use it",
	})
}

func TestRunFlags(t *testing.T) {
	labtest.Hermetic(t)
	o := mustParse(t, NewCmdRun, "3.1")
	if o.Lab != "3.1" || o.Scenario != "create" || o.Format != formatText || o.For != 0 || o.Record != "" || o.Settle != 500*time.Millisecond {
		t.Errorf("lab run 3.1 (the defaults): %+v", o)
	}
	o = mustParse(t, NewCmdRun, "4.4", "--scenario", "external-outage", "--for", "90s", "--format", "json",
		"--record", "trace.jsonl", "--set", "timescale=10", "--set", "breaker=off", "--kubeconfig", "kc", "--context", "ctx")
	if o.Lab != "4.4" || o.Scenario != "external-outage" || o.For != 90*time.Second || o.Format != formatJSON ||
		o.Record != "trace.jsonl" || o.setText() != "timescale=10,breaker=off" || o.Kubeconfig != "kc" || o.Context != "ctx" {
		t.Errorf("lab run with every flag: %+v", o)
	}
	if o := mustParse(t, NewCmdRun, "3.1", "--scenario", "none", "--for", "1m"); o.Scenario != noScenario || o.For != time.Minute {
		t.Errorf("lab run --scenario none --for 1m: %+v", o)
	}

	refused(t, NewCmdRun, map[string]string{
		"5.1":                       `no lab "5.1" (labs: 3.1, 4.4)`,
		"4.4 --scenario explode":    "valid: create, delete, external-outage, flaky-external, not-found, permanent-error, update-burst, or none",
		"4.4 --set requeue=later":   "valid: error, requeue, after, terminal",
		"4.4 --set speed=11":        `unknown switch "speed"`,
		"4.4 --format yaml":         "valid: text, json",
		"3.1 --scenario none":       "--for",
		"3.1 --for soon":            `invalid argument "soon" for "--for" flag`,
		"3.1 --for -1s":             "--for must not be negative",
		"3.1 --scenario":            "flag needs an argument: --scenario",
		"3.1 --scenario none --for": "flag needs an argument: --for",
		// Switches lab 3.1's controller does not read change nothing there.
		"3.1 --set breaker=on":                   "switch breaker belongs to lab 4.4; lab 3.1's controller does not use it",
		"3.1 --set ratelimit=off":                "switch ratelimit belongs to lab 4.4",
		"3.1 --set external=down,backoff=lesson": "switch backoff belongs to lab 4.4",
	})
}

func TestCheckFlags(t *testing.T) {
	labtest.Hermetic(t)
	reports := t.TempDir()
	results, junit := filepath.Join(reports, "results.json"), filepath.Join(reports, "junit.xml")
	o := mustParse(t, NewCmdCheck, "3.1", "--dir", "ws", "--exercise", "results", "--results", results, "--junit", junit,
		"--watch", "--keep-build", "--lang", "en", "--kubeconfig", "kc")
	if o.Lab != "3.1" || o.Dir != "ws" || o.Exercise != "results" || o.Results != results || o.JUnit != junit ||
		!o.Watch || !o.KeepBuild || o.Lang != "en" || o.Kubeconfig != "kc" || o.JSON {
		t.Errorf("lab check with every flag: %+v", o)
	}
	if o := mustParse(t, NewCmdCheck, "--json"); o.Lab != "" || !o.JSON || o.Watch {
		t.Errorf("lab check --json: %+v", o)
	}

	missing := filepath.Join(t.TempDir(), "missing")
	refused(t, NewCmdCheck, map[string]string{
		"9.9":                              `no lab "9.9" (labs: 3.1, 4.4)`,
		"3.1 4.4":                          "accepts at most 1 arg(s), received 2",
		"--json --watch":                   "use --watch with --results FILE instead",
		"--lang de":                        `unsupported language "de"`,
		"--results " + missing + "/r.json": "--results: cannot write " + missing + "/r.json: the folder " + missing + " does not exist",
		"--junit " + reports:               "--junit: " + reports + " is a folder, not a file",
	})
}

func TestInitFlags(t *testing.T) {
	labtest.Hermetic(t)
	if o := mustParse(t, NewCmdInit, "4.4", "--dir", "here", "--lang", "ru"); o.Lab != "4.4" || o.Dir != "here" || o.Lang != "ru" {
		t.Errorf("lab init 4.4 --dir here --lang ru: %+v", o)
	}
	t.Setenv(content.LangEnv, "en")
	if o := mustParse(t, NewCmdInit, "3.1"); o.Lab != "3.1" || o.Dir != "" || o.Lang != "en" {
		t.Errorf("lab init 3.1 (LAB_LANG=en): %+v", o)
	}
	refused(t, NewCmdInit, map[string]string{
		"":              "accepts 1 arg(s), received 0",
		"9.9":           `no lab "9.9" (labs: 3.1, 4.4)`,
		"3.1 --lang de": `--lang: unsupported language "de": use one of en, ru`,
	})
}

func TestResetArguments(t *testing.T) {
	labtest.Hermetic(t)
	for line, want := range map[string]ResetOptions{
		"":                        {},
		"results":                 {Exercise: "results"},
		"3.1":                     {Lab: "3.1"},
		"4.4 2 --dir ws":          {Lab: "4.4", Exercise: "2", Dir: "ws"},
		"--dir ws reconcile-loop": {Exercise: "reconcile-loop", Dir: "ws"},
	} {
		o := mustParse(t, NewCmdReset, strings.Fields(line)...)
		if o.Lab != want.Lab || o.Exercise != want.Exercise || o.Dir != want.Dir {
			t.Errorf("lab reset %s: lab %q, exercise %q, dir %q; want %q, %q, %q", line, o.Lab, o.Exercise, o.Dir, want.Lab, want.Exercise, want.Dir)
		}
	}
	refused(t, NewCmdReset, map[string]string{
		"9.9 results": `no lab "9.9" (labs: 3.1, 4.4)`,
		"3.1 a b":     "accepts at most 2 arg(s), received 3",
	})
}

func TestReplayArguments(t *testing.T) {
	if o := mustParse(t, NewCmdReplay, "trace.jsonl"); o.File != "trace.jsonl" {
		t.Errorf("lab replay trace.jsonl: %+v", o)
	}
	refused(t, NewCmdReplay, map[string]string{
		"":        "accepts 1 arg(s), received 0",
		"a b":     "accepts 1 arg(s), received 2",
		"a --tty": "unknown flag: --tty",
	})
}

func TestEnvFlags(t *testing.T) {
	if o := mustParse(t, NewCmdEnvUp, "--foreground"); !o.Foreground {
		t.Errorf("lab env up --foreground: %+v", o)
	}
	if o := mustParse(t, NewCmdEnvUp); o.Foreground {
		t.Errorf("lab env up: %+v", o)
	}
	refused(t, NewCmdEnvUp, map[string]string{"now": `unknown command "now"`})
	refused(t, NewCmdEnvStatus, map[string]string{"--all": "unknown flag: --all"})
}
