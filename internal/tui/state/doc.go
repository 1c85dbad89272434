// Package state folds the operator's observe.Event stream into what the lab's
// terminal UI shows: reconcile sequences (the watch event that caused each
// reconcile, its queue adds, the client calls it made, its result and what the
// work queue did with that result), the work queue seen item by item, objects
// with their phase history and conditions, per-item retry delays labelled by
// who chose them, the circuit breaker, rate limiter and external system, the
// switches, and the step-through gate (observe's own fold, GateState).
//
// It renders nothing, so it can be tested and benchmarked on its own, and it
// keeps every history in a fixed-size ring so a long-running lab (or an event
// flood) never grows memory without bound.
package state
