// Package hello is the controller of lab 3.1: it keeps a ConfigMap in sync
// with each HelloWorld and reports what it did in status conditions.
//
// It shows the basics of controller-runtime done the current way:
//   - a deleted object is not an error: client.IgnoreNotFound;
//   - the ConfigMap is created or updated idempotently
//     (controllerutil.CreateOrUpdate) with a controller owner reference, and
//     its changes wake the owner (the controller watches ConfigMaps it owns);
//   - conditions use typed reasons and meta.SetStatusCondition with
//     ObservedGeneration, and are persisted with Status().Update;
//   - a dependency that is not ready yet (the simulated external system) is
//     reported the way the requeue switch says — returned error,
//     Requeue: true, RequeueAfter or TerminalError — so each can be watched;
//   - reads come from the manager's cache (the HelloWorld, its ConfigMap),
//     except the one unwatched object: the Secret spec.secretRef names,
//     read through the APIReader (a cached read would start an informer on
//     every Secret), whose "signature" key is copied into the ConfigMap;
//   - a spec that can never work (count above 10) is a permanent error:
//     reconcile.TerminalError, no retries;
//   - a Conflict on the status write (the copy read was outdated) is
//     returned, wrapped: the queue's retry reads fresh data.
//
// With requeue=after it waits a fixed 5 s (divided by the timescale) — the
// lesson's "dependency not ready, check again soon". The backoff, breaker and
// ratelimit switches belong to lab 4.4 (operator/database).
package hello
