// Package eventtext renders lab's observation events as text for people: one
// aligned line per event (`lab run --format text`, `lab start --plain`,
// `lab replay` without a terminal), in observe's wording (observe.Event.Line)
// with termenv's ANSI colours when the caller says so, and an end-of-run
// summary (reconciles by result, queue adds by kind, time spent in each
// phase, time to Ready). A Printer writes a live stream of them — as text or
// JSON Lines, optionally recorded — and tells when the stream has gone quiet.
//
// Whether to colour is not decided here: callers pass
// iostreams.IOStreams.ColorEnabled as Options.Color.
package eventtext
