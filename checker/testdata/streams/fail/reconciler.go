// Package results: the classic mistake, an error instead of RequeueAfter.
package results

import "time"

// Choose says what the work queue does next.
func Choose(ready bool, retry time.Duration) string {
	if !ready {
		return "queue.add_rate_limited"
	}
	return "done"
}
