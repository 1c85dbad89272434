// Package checkkit is the toolkit of lab's hidden checks. The checker copies
// it (with the observation layer) into its private build of a learner's
// workspace, where the checks import it; it is compiled here too so it never
// rots.
//
// This package holds what every check needs and depends on the standard
// library only, so checks of plain Go code (built with -race) stay cheap to
// build; checks that run controllers use checkkit/cluster.
//
// A check fails with one line that names what was expected and what was
// observed: Expect(t, "…", "…").
package checkkit

import (
	"fmt"
	"math/rand/v2"
	"net"
	"testing"
	"time"
)

// WaitTimeout bounds every wait for something to happen on the control
// plane. It is generous: a wait ends as soon as its condition holds.
const WaitTimeout = 15 * time.Second

// Name returns prefix followed by a random suffix, so no check can rely on
// the names of the visible examples.
func Name(prefix string) string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 5)
	for i := range b {
		b[i] = letters[rand.IntN(len(letters))]
	}
	return prefix + "-" + string(b)
}

// Pick returns one of choices at random.
func Pick[T any](choices ...T) T { return choices[rand.IntN(len(choices))] }

// Seconds returns a random whole number of seconds in [lo, hi].
func Seconds(lo, hi int) time.Duration {
	return time.Duration(lo+rand.IntN(hi-lo+1)) * time.Second
}

// Between returns a random int in [lo, hi].
func Between(lo, hi int) int { return lo + rand.IntN(hi-lo+1) }

// Count says n of noun, in the plural unless n is 1: Count(1, "call") is
// "1 call", Count(2, "call") "2 calls".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// FreeAddr returns a loopback address with a port nothing listens on.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// Expect fails the check with the one-line reason the learner sees first:
// what was expected and what was observed.
func Expect(t testing.TB, expected, observed string, args ...any) {
	t.Helper()
	t.Fatalf("expected %s, saw %s", fmt.Sprintf(expected, args...), observed)
}

// Eventually polls cond until it returns nil or WaitTimeout passes; then it
// fails with what and cond's last error.
func Eventually(t testing.TB, what string, cond func() error) {
	t.Helper()
	EventuallyUnless(t, what, cond, nil)
}

// EventuallyUnless is Eventually that fails at once when hopeless (if set)
// gives a reason while cond does not hold: the evidence that cond cannot
// come true before the deadline, such as a controller that has nothing
// more to do with the object (cluster.Observer.DoneWith). A failing check
// then takes as long as the evidence takes, not WaitTimeout.
func EventuallyUnless(t testing.TB, what string, cond func() error, hopeless func(deadline time.Time) string) {
	t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("expected %s within %s, saw %v", what, WaitTimeout, err)
		}
		if hopeless != nil {
			if why := hopeless(deadline); why != "" {
				t.Fatalf("expected %s, saw %v — %s", what, err, why)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}
