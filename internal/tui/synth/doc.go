// Package synth writes realistic observe event streams without a control
// plane: the watch → queue → reconcile → client → queue sequence that
// controller-runtime produces, with the exact queue calls for each result.
// The TUI's tests, golden views and benchmarks are built on it.
package synth
