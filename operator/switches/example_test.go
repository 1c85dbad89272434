package switches_test

import (
	"fmt"

	"github.com/operator-lab/lab/operator/switches"
)

func ExampleSwitches_Apply() {
	sw := switches.New(nil)
	if err := sw.Apply("requeue=error,timescale=10"); err != nil {
		fmt.Println(err)
	}
	fmt.Println(sw.Get())
	fmt.Println(sw.Apply("requeue=sometimes"))
	// Output:
	// requeue=error,breaker=on,ratelimit=on,backoff=lesson,external=healthy,flakiness=0.3,timescale=10,workers=1
	// switch requeue: invalid value "sometimes" (valid: error, requeue, after, terminal)
}
