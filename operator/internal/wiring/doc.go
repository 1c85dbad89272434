// Package wiring registers a reconciler with a manager behind lab's
// observation layer: the observed work queue, the observed reconciler (with
// the step-through gate) and observed watch handlers for the primary kind and
// for every owned kind. Both reference controllers are built with it, so
// they are observed the same way.
package wiring
