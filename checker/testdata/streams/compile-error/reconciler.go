// Package results: does not compile.
package results

import "time"

// Choose says what the work queue does next.
func Choose(ready bool, retry time.Duration) string {
	var broken int = "text"
	if !ready {
		return "queue.add_after"
	}
	return "done"
}
