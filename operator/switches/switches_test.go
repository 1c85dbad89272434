package switches_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator/switches"
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

func TestApplySetsEveryKindOfSwitchAndEmitsOnlyChanges(t *testing.T) {
	em := &collect{}
	s := switches.New(em)
	err := s.Apply("requeue=terminal, breaker=off,ratelimit=on,backoff=controller,external=flaky,flakiness=0.25,timescale=50,workers=4")
	if err != nil {
		t.Fatal(err)
	}
	got := s.Get()
	want := switches.Values{Requeue: switches.RequeueTerminal, Breaker: false, RateLimit: true, Backoff: switches.BackoffController,
		External: switches.ExternalFlaky, Flakiness: 0.25, Timescale: 50, Workers: 4}
	if got != want {
		t.Fatalf("values = %+v, want %+v", got, want)
	}
	// ratelimit=on is the default, so it is not a change.
	var names []string
	for _, e := range em.events {
		if e.Kind != observe.KindSwitch {
			t.Errorf("unexpected event kind %s", e.Kind)
		}
		names = append(names, e.Name+"="+e.Value)
	}
	if strings.Join(names, ",") != "backoff=controller,breaker=off,external=flaky,flakiness=0.25,requeue=terminal,timescale=50,workers=4" {
		t.Errorf("switch events = %v", names)
	}
	if got.Scale(5*time.Second) != 100*time.Millisecond {
		t.Errorf("Scale(5s) at timescale 50 = %v", got.Scale(5*time.Second))
	}
	if again, err := roundTrip(got); err != nil || again != got {
		t.Errorf("String/Apply round trip = %+v, %v", again, err)
	}
}

func roundTrip(v switches.Values) (switches.Values, error) {
	s := switches.New(nil)
	err := s.Apply(v.String())
	return s.Get(), err
}

func TestBadInputNamesTheValidChoicesAndChangesNothing(t *testing.T) {
	cases := map[string]string{
		"requeue=sometimes":         "valid: error, requeue, after, terminal",
		"colour=blue":               "valid: requeue, breaker, ratelimit, backoff, external, flakiness, timescale, workers",
		"external=healthy,breaker":  "want name=value",
		"timescale=0":               "greater than 0",
		"flakiness=2":               "from 0 to 1",
		"workers=many":              "whole number",
		"breaker=off,backoff=never": "valid: controller, lesson",
	}
	for in, want := range cases {
		s := switches.New(nil)
		err := s.Apply(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Apply(%q) error = %v, want it to mention %q", in, err, want)
		}
		if s.Get() != switches.Defaults() {
			t.Errorf("Apply(%q) changed switches to %+v despite the error", in, s.Get())
		}
	}
}

func TestWorkersIsFixedOnceStarted(t *testing.T) {
	s := switches.New(nil)
	s.MarkStarted()
	if err := s.Set("workers", "2"); err == nil || !strings.Contains(err.Error(), "restart") {
		t.Fatalf("Set(workers) after start: err = %v", err)
	}
	if err := s.Set("requeue", "error"); err != nil {
		t.Fatalf("other switches stay settable: %v", err)
	}
}

func TestNotDoneFollowsTheRequeueSwitch(t *testing.T) {
	cause := errors.New("external system down")
	for _, tc := range []struct {
		mode       switches.Requeue
		wantResult reconcile.Result
		wantErr    func(error) bool
	}{
		{switches.RequeueError, reconcile.Result{}, func(err error) bool {
			return errors.Is(err, cause) && !errors.Is(err, reconcile.TerminalError(nil))
		}},
		{switches.RequeueRequeue, reconcile.Result{Requeue: true}, func(err error) bool { return err == nil }}, //nolint:staticcheck // the deprecated field is what is tested
		{switches.RequeueAfter, reconcile.Result{RequeueAfter: 3 * time.Second}, func(err error) bool { return err == nil }},
		{switches.RequeueTerminal, reconcile.Result{}, func(err error) bool {
			return errors.Is(err, cause) && errors.Is(err, reconcile.TerminalError(nil))
		}},
	} {
		v := switches.Defaults()
		v.Requeue = tc.mode
		res, err := v.NotDone(cause, 3*time.Second)
		if res != tc.wantResult || !tc.wantErr(err) {
			t.Errorf("requeue=%s: NotDone = %+v, %v", tc.mode, res, err)
		}
	}
}

func TestConcurrentReadersAndWriters(t *testing.T) {
	s := switches.New(nil)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				_ = s.Apply("external=down,timescale=10")
				_ = s.Apply("external=healthy,timescale=1")
			}
		}()
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				v := s.Get()
				// Apply is atomic: a reader never sees half of one call.
				if (v.External == switches.ExternalDown) != (v.Timescale == 10) {
					t.Errorf("torn read: %+v", v)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestEveryValueSaysWhatItDoes: the live view words a flipped switch with
// Effect, so no value of a switch it can flip may be left unexplained.
func TestEveryValueSaysWhatItDoes(t *testing.T) {
	for _, info := range switches.All() {
		for _, v := range info.Valid {
			if switches.Effect(info.Name, v) == "" {
				t.Errorf("%s=%s has no effect", info.Name, v)
			}
		}
	}
	for _, c := range []struct{ name, value, want string }{
		{switches.NameRequeue, "after", "returns RequeueAfter → Forget + AddAfter(d): a fixed delay you choose"},
		{switches.NameBreaker, "off", "external calls bypass the circuit breaker"},
		// A learner's runner names its own states of the external system.
		{switches.NameExternal, "not-ready", "the simulated external system is now not-ready"},
		{switches.NameTimescale, "10", "delays the operator chooses are 10× shorter"},
		{switches.NameTimescale, "1", "delays run at real time"},
		{switches.NameTimescale, "0.5", "delays the operator chooses are 2× longer"},
		{switches.NameRequeue, "sometimes", ""},
		{"colour", "blue", ""},
	} {
		if got := switches.Effect(c.name, c.value); got != c.want {
			t.Errorf("Effect(%s, %s) = %q, want %q", c.name, c.value, got, c.want)
		}
	}
}
