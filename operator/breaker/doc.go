// Package breaker is a circuit breaker for calls to an external system,
// safe under concurrent reconciles (MaxConcurrentReconciles > 1).
//
// Closed: calls go through; consecutive failures are counted and reaching
// the threshold opens the breaker. Open: calls fail fast with ErrOpen until
// the open timeout has passed. Half-open: exactly one caller is let through as
// a probe while everyone else still gets ErrOpen; the probe's success closes
// the breaker, its failure opens it again for another timeout. Each admitted
// call carries the generation (the count of state changes) it was admitted
// in; the outcome of a late call, admitted before the last state change,
// is ignored, so a slow call that started while the breaker was closed can
// neither close it once it has opened nor count against it once it has
// closed again.
//
// Observers (Options.OnTransition, OnFailureCount, OnRefuse) see every
// change of state (an opening with its cooldown), every change of the
// failure count and every refused call with what is left of the cooldown,
// so a view can show the count as it grows and count down to the probe.
//
// The lesson's version (an unguarded struct flipping a state string) is a data
// race with several workers and lets every waiting caller through at once when
// the timeout passes; this one keeps all state under a mutex and hands the
// half-open probe to a single caller.
package breaker
