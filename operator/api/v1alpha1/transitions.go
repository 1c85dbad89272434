package v1alpha1

import "slices"

// HappyPath is the order a Database goes through when nothing fails.
var HappyPath = []Phase{PhasePending, PhaseProvisioning, PhaseConfiguring, PhaseDeploying, PhaseVerifying, PhaseReady}

// transitions is the Database state machine, written once: for each phase,
// the phases one reconcile may move a Database to. Every phase can fail;
// a retry from Failed starts again at Provisioning (the step that failed is
// redone from there, each step being idempotent); a spec change on a Ready
// Database goes through Updating and is verified again. The empty phase is
// a Database no reconcile has seen yet; one whose spec is invalid from the
// start fails at once.
var transitions = map[Phase][]Phase{
	"":                {PhasePending, PhaseFailed},
	PhasePending:      {PhaseProvisioning, PhaseFailed},
	PhaseProvisioning: {PhaseConfiguring, PhaseFailed},
	PhaseConfiguring:  {PhaseDeploying, PhaseFailed},
	PhaseDeploying:    {PhaseVerifying, PhaseFailed},
	PhaseVerifying:    {PhaseReady, PhaseFailed},
	PhaseReady:        {PhaseUpdating, PhaseFailed},
	PhaseUpdating:     {PhaseVerifying, PhaseFailed},
	PhaseFailed:       {PhaseProvisioning},
}

// Phases lists every phase: the happy path, then the phases off it.
func Phases() []Phase {
	return append(slices.Clone(HappyPath), PhaseFailed, PhaseUpdating)
}

// NextPhases lists the phases a Database in from may move to, in a stable order.
func NextPhases(from Phase) []Phase { return slices.Clone(transitions[from]) }

// CanTransition reports whether one reconcile may move a Database from one
// phase to another. Staying in a phase is always allowed.
func CanTransition(from, to Phase) bool {
	return from == to || slices.Contains(transitions[from], to)
}
