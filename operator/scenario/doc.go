// Package scenario holds named drivers for the reference operator: scripted
// sequences of API calls and switch changes that make a pattern happen, for
// `lab run --scenario NAME` and the TUI. Each step is emitted as a
// "scenario" event (name = scenario, op = step, message = detail), so a
// trace shows what the driver did next to what the operator did about it.
//
// Scenarios talk to the API server with their own client (not the
// operator's), so their calls are not mistaken for the operator's in a trace.
// Waits poll that client; they end with the context or after a timeout
// scaled by the timescale switch.
package scenario
