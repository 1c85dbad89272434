package checker_test

import (
	"testing"

	"github.com/operator-lab/lab/checker"
	"github.com/operator-lab/lab/checker/checkertest"
	"github.com/operator-lab/lab/labs"
)

// starterReasons are what the starter of each exercise must be told: the
// failure message speaks of what was expected and what was observed.
var starterReasons = map[string]map[string][]string{
	"3.1": {
		"manager": {"expected"},
		"basics":  {"expected"},
		"results": {"expected Reconcile to return requeue_after (ctrl.Result{RequeueAfter: ", "saw reconcile.end"},
		"reads":   {"expected", "cache"},
	},
	// Lab 4.4's starters are the classic mistakes: an incomplete transition
	// table, work during an outage, a non-idempotent create, an overflowing
	// backoff, a racy breaker, a limiter that spends tokens twice, a
	// reconcile that returns an error together with RequeueAfter, and a
	// finalizer added with a merge patch from a stale copy.
	"4.4": {
		"statemachine": {"CanTransition"},
		"dependency":   {"expected"},
		"idempotency":  {"already exists"},
		"backoff":      {"Delay("},
		"breaker":      {"data race", "breaker/breaker.go:"},
		"ratelimit":    {"cancelled"},
		"together":     {"error together with RequeueAfter"},
		"finalizer":    {"another controller"},
	},
}

// TestLabContent is the content test: for every lab, every exercise's
// starter fails its checks (a failure with a reason, not a build error) and
// its reference solution passes. (Every starter carrying a TODO(lab) marker
// and every file being declared are checked by labs.Load.) One build per
// lab variant keeps it affordable.
func TestLabContent(t *testing.T) {
	all, err := labs.All()
	if err != nil {
		t.Fatal(err)
	}
	// The four checks run at once: a failing starter spends most of its
	// time waiting on the control plane, not on the CPU.
	for _, lab := range all {
		t.Run(lab.ID+"/solutions pass", func(t *testing.T) {
			t.Parallel()
			report := check(t, checker.Options{Lab: lab, Dir: checkertest.Workspace(t, lab, true, nil)})
			for _, e := range lab.Exercises {
				expectResult(t, report, e.ID, checker.StatusPass)
			}
			if !report.Passed() {
				t.Error("the report of all solutions does not say passed")
			}
		})
		t.Run(lab.ID+"/starters fail", func(t *testing.T) {
			t.Parallel()
			report := check(t, checker.Options{Lab: lab, Dir: checkertest.Workspace(t, lab, false, nil)})
			for _, e := range lab.Exercises {
				expectResult(t, report, e.ID, checker.StatusFail, starterReasons[lab.ID][e.ID]...)
			}
		})
	}
}
