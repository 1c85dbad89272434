package checkkit

import "testing"

func TestCountSaysOneInTheSingular(t *testing.T) {
	for n, want := range map[int]string{0: "0 calls", 1: "1 call", 2: "2 calls"} {
		if got := Count(n, "call"); got != want {
			t.Errorf("Count(%d, call) = %q, want %q", n, got, want)
		}
	}
}
