// Package results: panics on a nil map.
package results

import "time"

var seen map[bool]int

// Choose says what the work queue does next.
func Choose(ready bool, retry time.Duration) string {
	seen[ready]++
	if !ready {
		return "queue.add_after"
	}
	return "done"
}
