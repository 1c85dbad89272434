// Package observe is lab's observation layer: one typed event model for
// everything a controller does (watch events, work-queue calls, reconcile
// calls and results, client calls, phases, conditions, breaker, backoff,
// rate limiting, external calls) and what lab does around it (switches, the
// step-through gate, scenario steps, the session, a learner's runner getting
// ready), with a constructor and accessors per kind (kinds.go); a
// non-blocking bus that fans events out to subscribers; a JSON Lines codec;
// the one text wording of events (Event.Line for traces and test dumps,
// Event.Brief for check messages); GateState, the one fold of gate events;
// and wrappers that emit those events from any controller-runtime
// controller, ours or a learner's:
//
//   - NewQueue, for controller.Options.NewQueue: controller-runtime's priority
//     queue, reporting queue.add / add_after / add_rate_limited / get / done /
//     forget (with the delay the rate limiter chose and the item's failures);
//   - Reconciler: reconcile.start and reconcile.end (result as the controller
//     will treat it), a Scope in the context, and an optional step-through Gate;
//   - Client and Reader: client events with verb, kind, source and outcome;
//   - Handler: watch events, and queue adds linked to them by Cause;
//     WatchInformers when a controller's handlers cannot be wrapped.
//
// Emitting never blocks: a subscriber that falls behind loses events, and
// Subscription.Dropped says how many.
package observe
