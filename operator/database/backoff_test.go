package database_test

import (
	"math"
	"testing"
	"time"

	"github.com/operator-lab/lab/operator/database"
	"github.com/operator-lab/lab/operator/switches"
)

func TestLessonBackoffDoublesFromFiveSecondsUpToFiveMinutes(t *testing.T) {
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second,
		80 * time.Second, 160 * time.Second, 5 * time.Minute, 5 * time.Minute}
	for i, w := range want {
		attempt := int32(i + 1)
		if got := database.LessonBackoff(attempt); got != w {
			t.Errorf("LessonBackoff(%d) = %v, want %v", attempt, got, w)
		}
	}
	// A naive 5s<<attempt overflows long before MaxInt32 and goes negative.
	for _, attempt := range []int32{0, -1, 63, 64, 1 << 20, math.MaxInt32} {
		got := database.LessonBackoff(attempt)
		if got <= 0 || got > 5*time.Minute {
			t.Errorf("LessonBackoff(%d) = %v, want within (0, 5m]", attempt, got)
		}
	}
}

func TestRetryDelayFollowsTheBackoffSwitchAndTimescale(t *testing.T) {
	v := switches.Defaults()
	v.Timescale = 10
	v.Backoff = switches.BackoffLesson
	if got := database.RetryDelay(v, 3); got != 2*time.Second {
		t.Errorf("lesson, attempt 3, timescale 10: %v, want 2s", got)
	}
	v.Backoff = switches.BackoffController
	if got := database.RetryDelay(v, 3); got != time.Second {
		t.Errorf("controller, timescale 10: %v, want the fixed 10s/10 = 1s", got)
	}
}
