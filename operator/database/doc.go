// Package database is the controller of lab 4.4: every pattern of the
// "advanced patterns" lesson, written the way controller-runtime v0.25
// wants it.
//
// State machine. Each reconcile performs one step of
//
//	Pending → Provisioning → Configuring → Deploying → Verifying → Ready
//	Ready → Updating → Verifying   (spec changed: generation ≠ observedGeneration)
//	any step → Failed → Provisioning   (external failure, then a retry)
//
// and persists the new phase with Status().Update. That write is itself a
// watch event, which queues the next step; every transition is emitted as a
// "phase" event and every changed condition as a "condition" event.
//
// External dependency. Provisioning health-checks the (simulated) external
// system and provisions the database there; Verifying pings it. A failure
// sets ExternalSystemAvailable=False, moves to Failed and is reported as the
// requeue switch says. Failed retries with a health check first, so a down
// system costs one cheap call per retry and no status writes.
//
// Idempotency. The Secret and the StatefulSet are made with
// controllerutil.CreateOrUpdate and a controller owner reference, and the
// controller watches what it owns. The mutate functions only touch the
// fields the controller owns, so the API server's defaults never look like a
// difference: a steady state makes no writes at all.
//
// Rate limiting. A step reserves the golang.org/x/time/rate tokens for all
// the external calls it will make, at once (one at a time, concurrent steps
// can starve each other: each spends a token on its first call, then all
// wait for the second). If the reservation would have to wait, it is
// cancelled and the reconcile returns RequeueAfter — a worker never sleeps.
// The lesson's reconciler-wide lastAPICall timestamp is a data race with
// several workers. Every check is a "ratelimit" event, allowed or not, with
// the calls it was for.
//
// Backoff. With backoff=lesson and requeue=after, the retry delay is
// 5s·2ⁿ⁻¹ for the nth consecutive failure, capped at 5m (the shift is capped,
// so no overflow). The count and the next retry time live in status, so a
// watch event or a restart does not reset them. ("backoff" events.)
//
// Circuit breaker. External calls go through operator/breaker: open after 5
// consecutive failures, one probe after the (timescaled) open timeout. The
// breaker is asked before the rate limiter: a call it refuses costs the
// external system nothing and takes no token, and is reported as the
// requeue switch says, like any failure. (Asked after, the limiter's
// RequeueAfter — a Forget — would keep resetting the queue's backoff of
// the refusals: with requeue=requeue, a few reconciles a second for as
// long as the breaker stays open.) "breaker" events report each
// transition (an opening with its cooldown), each change of the failure
// count and each refused call.
//
// Every delay the controller chooses is divided by the timescale switch.
package database
