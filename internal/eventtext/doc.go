// Package eventtext renders lab's observation events as text for people: one
// aligned line per event (`lab run --format text`, `lab start --plain`,
// `lab replay` without a terminal), in observe's wording (observe.Event.Line)
// with colours for terminals, and an end-of-run summary (reconciles by
// result, queue adds by kind, time spent in each phase, time to Ready).
package eventtext
