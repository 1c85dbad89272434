package labtest

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"
)

// WaitForLine reads r until a line holds want, and then drains the rest in
// the background so the writer never blocks on a full pipe.
func WaitForLine(r io.Reader, want string, timeout time.Duration) error {
	found := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if strings.Contains(sc.Text(), want) {
				found <- true
				for sc.Scan() {
				}
				return
			}
		}
		found <- false
	}()
	select {
	case ok := <-found:
		if !ok {
			return fmt.Errorf("output ended before %q", want)
		}
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("no %q within %s", want, timeout)
	}
}
