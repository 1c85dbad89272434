// Package observe is lab's observation layer: one typed event model for
// everything a controller does (watch events, work-queue calls, reconcile
// calls and results, client calls, phases, conditions, breaker, backoff,
// rate limiting, external calls), a non-blocking bus that fans events out to
// subscribers, a JSON Lines codec, and wrappers that emit those events from
// any controller-runtime controller: a work queue (controller.Options.NewQueue),
// a reconciler, a client and an event handler.
package observe
