// Package world simulates what envtest does not have, so lab's reference
// operator has something real to react to:
//
//   - External: an external system (think: a managed database service) that
//     the Database controller provisions databases in and health-checks. Its
//     behaviour follows the `external` switch — healthy, down, flaky (fails
//     with probability `flakiness`, from a seedable random source), slow, or
//     rate-limited — and can be flipped while the operator runs. Every call is
//     emitted as an "external" event.
//   - Workloads: envtest runs no kube-controller-manager and no kubelet, so a
//     StatefulSet never becomes ready by itself. The workload simulator marks
//     the operator's StatefulSets ready a short (timescaled) delay after each
//     spec change, the way a rollout would.
package world
