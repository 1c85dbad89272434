package database

import (
	"time"

	"github.com/operator-lab/lab/operator/switches"
)

// Base delays, before timescale.
const (
	// LessonBackoffBase and LessonBackoffCap bound the lesson's exponential
	// backoff: 5s, 10s, 20s, 40s, ... at most 5m.
	LessonBackoffBase = 5 * time.Second
	LessonBackoffCap  = 5 * time.Minute
	// FixedRetryInterval is the RequeueAfter used with backoff=controller:
	// the controller does not grow its own delays.
	FixedRetryInterval = 10 * time.Second
	// maxShift caps the exponent: 5s<<6 is already past the cap, and an
	// uncapped shift of a large retry count would overflow time.Duration.
	maxShift = 6
)

// LessonBackoff returns the delay before retry number attempt (1 for the
// first retry): 5s·2^(attempt-1), capped at 5m.
func LessonBackoff(attempt int32) time.Duration {
	shift := min(max(attempt-1, 0), maxShift)
	return min(LessonBackoffBase<<shift, LessonBackoffCap)
}

// RetryDelay is the delay the controller itself picks for retry number
// attempt under the given switches, already divided by the timescale.
func RetryDelay(v switches.Values, attempt int32) time.Duration {
	if v.Backoff == switches.BackoffLesson {
		return v.Scale(LessonBackoff(attempt))
	}
	return v.Scale(FixedRetryInterval)
}
