// Package results: a counter many goroutines touch without a lock.
package results

import (
	"sync"
	"time"
)

var calls int

// Choose says what the work queue does next.
func Choose(ready bool, retry time.Duration) string {
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			calls++
		}()
	}
	wg.Wait()
	if !ready {
		return "queue.add_after"
	}
	return "done"
}
