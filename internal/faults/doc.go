// Package faults holds lab's fault-injection suite (its tests only): it
// runs the real lab binary and ends it the hard ways — SIGINT, SIGTERM,
// SIGHUP and SIGKILL at random points of start-up, of the live view, of
// `lab start --mine` and of a check's build and run phases — and feeds it
// broken state: concurrent `lab env up`, forged and garbage state files,
// a missing kubeconfig, a corrupt control-plane binary.
//
// Each case marks the lab processes it starts with an environment
// variable of its own, which every descendant inherits, and asserts on
// those alone: no marked process is left, no private temp folder is left
// (a SIGKILL'd lab's folder is reaped by the next lab), no stack trace is
// printed, the message is clear and the workspace is unchanged.
package faults
