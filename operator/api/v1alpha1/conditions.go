package v1alpha1

// Condition types. Both kinds report Ready; each names its dependency
// condition after what it depends on; Failed is set when the controller gave up
// (a permanent error, or the terminal requeue strategy).
const (
	ConditionReady                   = "Ready"
	ConditionFailed                  = "Failed"
	ConditionDependencyAvailable     = "DependencyAvailable"
	ConditionExternalSystemAvailable = "ExternalSystemAvailable"
)

// Condition reasons. Reasons are CamelCase machine-readable words (the
// metav1.Condition rules); the message carries the human detail.
const (
	// ReasonReconciled: the object's desired state is in place.
	ReasonReconciled = "Reconciled"
	// ReasonInvalidSpec: the spec can never be reconciled as written; retrying will not help.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonAvailable: the dependency answered its health check.
	ReasonAvailable = "Available"
	// ReasonUnavailable: the dependency failed its health check or the call.
	ReasonUnavailable = "Unavailable"
	// ReasonCircuitOpen: the circuit breaker refused the call without making it.
	ReasonCircuitOpen = "CircuitOpen"
	// ReasonGaveUp: the terminal requeue strategy stopped retrying.
	ReasonGaveUp = "GaveUp"
	// ReasonRecovered: the object left the Failed phase.
	ReasonRecovered = "Recovered"
	// ReasonInProgress: the object is moving through its phases.
	ReasonInProgress = "InProgress"
	// ReasonWaitingForWorkload: the workload has not reported ready yet.
	ReasonWaitingForWorkload = "WaitingForWorkload"
)
