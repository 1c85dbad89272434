// Package eventtext renders lab's observation events as text: one aligned
// line per event (`lab run --format text`, the TUI's plain mode, test
// failure dumps) and an end-of-run summary (reconciles by result, queue adds
// by kind, time spent in each phase, time to Ready).
package eventtext
