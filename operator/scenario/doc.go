// Package scenario holds the named scenarios of the reference operator's
// labs — scripted changes to a lab's objects and its external system that
// make a pattern happen — and the lab's sample objects they change. Both
// `lab run --scenario NAME` (Run, headless) and the live view's lesson
// demos (Live) run them, so there is one definition of each; the live
// view's c/u/d keys change objects through the same ClientObjects. What
// the samples refer to (lab 3.1's HelloWorlds name a Secret in
// spec.secretRef) is a Prerequisite of theirs, created once by the first
// Create.
//
// Each step is emitted as a "scenario" event (name = scenario or actor,
// op = step, message = detail), so a trace shows what the driver did next
// to what the operator did about it.
//
// A headless run talks to the API server with its own client (not the
// operator's), so its calls are not mistaken for the operator's in a
// trace. Its waits poll that client; they end with the context or after a
// timeout scaled by the timescale switch.
package scenario
