package content

import "time"

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
}

// The happy path, written once for the walkthroughs.
var happyPath = []string{
	"→Pending", "Pending→Provisioning", "Provisioning→Configuring",
	"Configuring→Deploying", "Deploying→Verifying", "Verifying→Ready",
}

// Walkthroughs are the stories the lessons tell about the running operator.
var Walkthroughs = []Walkthrough{
	{
		ID: "create", Lesson: "4.4", Section: "multi-phase", Scenario: "create",
		Phases: happyPath,
		Conditions: map[string][]ConditionStep{
			"ExternalSystemAvailable": {{"True", "Available"}},
		},
	},
	{
		ID: "spec-change", Lesson: "4.4", Section: "state-machine", Scenario: "update-burst",
		Phases:     append(append([]string{}, happyPath...), "Ready→Updating", "Updating→Verifying", "Verifying→Ready"),
		RepeatLast: 3,
	},
	{
		ID: "outage", Lesson: "4.4", Section: "combined", Scenario: "external-outage",
		Switches: []string{"requeue=after", "backoff=lesson", "breaker=on", "ratelimit=on"},
		Outage:   8 * time.Minute,
		Phases: []string{
			"→Pending", "Pending→Provisioning", "Provisioning→Failed",
			"Failed→Provisioning", "Provisioning→Configuring", "Configuring→Deploying",
			"Deploying→Verifying", "Verifying→Ready",
		},
		Conditions: map[string][]ConditionStep{
			"ExternalSystemAvailable": {{"False", "Unavailable"}, {"True", "Available"}},
			"Failed":                  {{"True", "Unavailable"}, {"False", "Recovered"}},
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
