// Package results: the solved exercise.
package results

import "time"

// Choose says what the work queue does next.
func Choose(ready bool, retry time.Duration) string {
	if !ready {
		return "queue.add_after"
	}
	return "done"
}
