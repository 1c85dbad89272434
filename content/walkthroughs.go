package content

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/operator-lab/lab/operator/api/v1alpha1"
)

// ConditionStep is one change of a status condition: its status and reason.
type ConditionStep struct {
	Status string // "True" or "False"
	Reason string
}

// Walkthrough is a lesson's "this is what you see" story, written as data:
// a scenario of the reference operator and what the operator does when it
// runs. The lesson text tells the story; a test in operator/scenario
// replays the scenario on a real control plane and checks every field, and
// a test in content checks that the lesson names the phases and reasons.
type Walkthrough struct {
	ID      string
	Lesson  string // the lesson, and the lab whose operator shows it
	Section string // the section that tells the story
	// Scenario is the scenario's name in operator/scenario's catalogue.
	Scenario string
	// Switches are set before the scenario runs ("name=value"); the test
	// adds its own timescale.
	Switches []string
	// Outage, if set, is how long the external system stays down, in
	// operator time; it replaces the scenario's own Recover (in the live
	// view: bring the system back with the switch when you like).
	Outage time.Duration
	// Phases are the object's phase changes, "from→to" ("→Pending" for the
	// first), in order; every one is a separate reconcile.
	Phases []string
	// RepeatLast, if set, says the last RepeatLast phase changes may come
	// several times over (the queue merges a burst of events into one
	// update or a few, depending on timing).
	RepeatLast int
	// Conditions are, for each condition type named, its changes in order.
	Conditions map[string][]ConditionStep
	// Delays are the retry delays the controller chooses (backoff events),
	// in operator time, in order.
	Delays []time.Duration
	// Breaker are the circuit breaker's transitions, "from→to", in order.
	Breaker []string
	// External, if set, are the object's calls to the external system, by
	// operation (operator/world's Op* names), in order.
	External []string
	// RepeatLastCall says the last external call may come several times
	// over: a reconcile that reads the cache before the finalizer's removal
	// has reached it repeats the cleanup.
	RepeatLastCall bool
	// Gone says the object is deleted by the end: no finalizer is left.
	Gone bool
}

// move is one phase change as Walkthrough.Phases writes it.
func move(from, to v1alpha1.Phase) string { return string(from) + "→" + string(to) }

// moves are the phase changes along phases, from no phase at all.
func moves(phases ...v1alpha1.Phase) []string {
	out := make([]string, 0, len(phases))
	var from v1alpha1.Phase
	for _, p := range phases {
		out = append(out, move(from, p))
		from = p
	}
	return out
}

// happyPath is the API's happy path as phase changes.
var happyPath = moves(v1alpha1.HappyPath...)

// Condition steps, named after the API's constants.
var (
	isTrue  = string(metav1.ConditionTrue)
	isFalse = string(metav1.ConditionFalse)
)

// Walkthroughs are the stories the lessons tell about the running operator.
var Walkthroughs = []Walkthrough{
	{
		ID: "create", Lesson: "4.4", Section: "multi-phase", Scenario: "create",
		Phases: happyPath,
		Conditions: map[string][]ConditionStep{
			v1alpha1.ConditionExternalSystemAvailable: {{isTrue, v1alpha1.ReasonAvailable}},
		},
	},
	{
		ID: "delete", Lesson: "4.4", Section: "finalizers", Scenario: "delete",
		Phases:         happyPath,
		External:       []string{"healthcheck", "provision", "ping", "deprovision"},
		RepeatLastCall: true,
		Gone:           true,
	},
	{
		ID: "spec-change", Lesson: "4.4", Section: "state-machine", Scenario: "update-burst",
		Phases: append(append([]string{}, happyPath...),
			move(v1alpha1.PhaseReady, v1alpha1.PhaseUpdating), move(v1alpha1.PhaseUpdating, v1alpha1.PhaseVerifying),
			move(v1alpha1.PhaseVerifying, v1alpha1.PhaseReady)),
		RepeatLast: 3,
	},
	{
		ID: "outage", Lesson: "4.4", Section: "combined", Scenario: "external-outage",
		Switches: []string{"requeue=after", "backoff=lesson", "breaker=on", "ratelimit=on"},
		Outage:   8 * time.Minute,
		Phases: moves(v1alpha1.PhasePending, v1alpha1.PhaseProvisioning, v1alpha1.PhaseFailed,
			v1alpha1.PhaseProvisioning, v1alpha1.PhaseConfiguring, v1alpha1.PhaseDeploying,
			v1alpha1.PhaseVerifying, v1alpha1.PhaseReady),
		Conditions: map[string][]ConditionStep{
			v1alpha1.ConditionExternalSystemAvailable: {{isFalse, v1alpha1.ReasonUnavailable}, {isTrue, v1alpha1.ReasonAvailable}},
			v1alpha1.ConditionFailed:                  {{isTrue, v1alpha1.ReasonUnavailable}, {isFalse, v1alpha1.ReasonRecovered}},
		},
		// 5 s·2ⁿ, capped at 5 m: the attempts fail at 0 s, 5 s, 15 s, 35 s,
		// 75 s, 155 s and 315 s of the outage; the one at 615 s succeeds.
		Delays: []time.Duration{
			5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second,
			80 * time.Second, 160 * time.Second, 5 * time.Minute,
		},
		// The fifth failure in a row opens it; every later retry comes after
		// the one-minute cool-down, so it is the half-open probe: two fail,
		// the third (after the system is back) closes it.
		Breaker: []string{
			"closed→open",
			"open→half-open", "half-open→open",
			"open→half-open", "half-open→open",
			"open→half-open", "half-open→closed",
		},
	},
}
