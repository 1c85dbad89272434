package world_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator/switches"
	"github.com/operator-lab/lab/operator/world"
)

type collect struct {
	mu     sync.Mutex
	events []observe.Event
}

func (c *collect) Emit(e observe.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, e)
}

func newExternal(t *testing.T, set string, seed uint64) (*world.External, *collect) {
	t.Helper()
	sw := switches.New(nil)
	if err := sw.Apply(set); err != nil {
		t.Fatal(err)
	}
	em := &collect{}
	return world.NewExternal(sw, em, seed), em
}

func TestHealthyAndDown(t *testing.T) {
	ctx := context.Background()
	x, em := newExternal(t, "external=healthy", 1)
	ep1, err := x.Provision(ctx, "ns/a", "app")
	if err != nil {
		t.Fatal(err)
	}
	ep2, err := x.Provision(ctx, "ns/a", "app")
	if err != nil || ep1 != ep2 || x.Provisioned() != 1 {
		t.Fatalf("Provision is not idempotent: %q then %q (%v), %d provisioned", ep1, ep2, err, x.Provisioned())
	}
	if err := x.HealthCheck(ctx); err != nil {
		t.Fatal(err)
	}

	down, downEm := newExternal(t, "external=down", 1)
	if err := down.HealthCheck(ctx); !errors.Is(err, world.ErrUnavailable) {
		t.Fatalf("down: %v", err)
	}
	if _, err := down.Provision(ctx, "ns/a", "app"); !errors.Is(err, world.ErrUnavailable) || down.Provisioned() != 0 {
		t.Fatalf("down Provision: %v, %d provisioned", err, down.Provisioned())
	}
	last := downEm.events[len(downEm.events)-1]
	if last.Kind != observe.KindExternal || last.Op != world.OpProvision || last.Outcome != world.OutcomeUnavailable || last.Error == "" {
		t.Errorf("event for a failed call = %+v", last)
	}
	if len(em.events) != 3 || em.events[0].Outcome != world.OutcomeOK {
		t.Errorf("healthy events = %+v", em.events)
	}
}

func TestDeprovision(t *testing.T) {
	ctx := context.Background()
	x, _ := newExternal(t, "external=healthy", 1)
	first, err := x.Provision(ctx, "ns/a", "app")
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Deprovision(ctx, "ns/a"); err != nil || x.Provisioned() != 0 {
		t.Fatalf("Deprovision: %v, %d still provisioned", err, x.Provisioned())
	}
	if err := x.Deprovision(ctx, "ns/a"); err != nil {
		t.Fatalf("a second Deprovision of the same key: %v, want success (it is a retry)", err)
	}
	again, err := x.Provision(ctx, "ns/a", "app")
	if err != nil || again == first {
		t.Fatalf("provisioned again: endpoint %q (%v), want a new one, not %q", again, err, first)
	}
	down, _ := newExternal(t, "external=down", 1)
	if err := down.Deprovision(ctx, "ns/a"); !errors.Is(err, world.ErrUnavailable) {
		t.Fatalf("down Deprovision: %v, want ErrUnavailable", err)
	}
}

func outcomes(t *testing.T, x *world.External, n int) []bool {
	t.Helper()
	out := make([]bool, n)
	for i := range out {
		out[i] = x.HealthCheck(context.Background()) == nil
	}
	return out
}

func TestFlakyIsSeededAndFollowsTheProbability(t *testing.T) {
	a, _ := newExternal(t, "external=flaky,flakiness=0.3,timescale=1000", 42)
	b, _ := newExternal(t, "external=flaky,flakiness=0.3,timescale=1000", 42)
	ra, rb := outcomes(t, a, 400), outcomes(t, b, 400)
	failures := 0
	for i := range ra {
		if ra[i] != rb[i] {
			t.Fatalf("same seed, different outcome at call %d", i)
		}
		if !ra[i] {
			failures++
		}
	}
	// 400 draws at p=0.3: 120 expected; 60..180 is far outside any plausible spread.
	if failures < 60 || failures > 180 {
		t.Errorf("%d failures in 400 calls at flakiness 0.3", failures)
	}
}

func TestRateLimitedRefusesBursts(t *testing.T) {
	x, em := newExternal(t, "external=ratelimited", 1)
	res := outcomes(t, x, 5)
	// Burst of 2, then one per second: five calls in a few milliseconds
	// cannot all pass.
	if !res[0] || !res[1] || res[4] {
		t.Fatalf("outcomes = %v, want the first two to pass and later ones refused", res)
	}
	last := em.events[len(em.events)-1]
	if last.Outcome != world.OutcomeRateLimited {
		t.Errorf("outcome = %q", last.Outcome)
	}
	if err := x.HealthCheck(context.Background()); !errors.Is(err, world.ErrRateLimited) {
		t.Errorf("err = %v, want ErrRateLimited", err)
	}
}

func TestSlowCallsTakeTheirTimeAndHonourCancellation(t *testing.T) {
	x, em := newExternal(t, "external=slow,timescale=20", 1) // 2s/20 = 100ms
	if err := x.HealthCheck(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := em.events[0].LatencyMs; got < 100 {
		t.Errorf("slow call latency %.1fms, want at least 100ms", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := x.HealthCheck(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled slow call: %v", err)
	}
	if em.events[1].Outcome != world.OutcomeCancelled {
		t.Errorf("cancelled call outcome = %q", em.events[1].Outcome)
	}
}
