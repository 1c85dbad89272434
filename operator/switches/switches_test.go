package switches_test

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator"
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

// TestSwitchesBelongToTheLabsThatReadThem: lab 3.1's HelloWorld controller
// calls its dependency directly, so the breaker, ratelimit and backoff
// switches, which would change nothing there, are lab 4.4's alone.
func TestSwitchesBelongToTheLabsThatReadThem(t *testing.T) {
	var names31 []string
	for _, info := range switches.ForLab(operator.Lab31) {
		names31 = append(names31, info.Name)
	}
	if got := strings.Join(names31, ","); got != "requeue,external,flakiness,timescale,workers" {
		t.Errorf("lab 3.1's switches = %s", got)
	}
	if len(switches.ForLab(operator.Lab44)) != len(switches.All()) {
		t.Errorf("lab 4.4 reads %d of %d switches, want all", len(switches.ForLab(operator.Lab44)), len(switches.All()))
	}
	// Every lab a switch names is one the operator runs.
	for _, info := range switches.All() {
		for _, lab := range info.Labs {
			if !slices.Contains(operator.Labs(), lab) {
				t.Errorf("switch %s belongs to lab %q, which the operator does not run (labs: %v)", info.Name, lab, operator.Labs())
			}
		}
	}
	for _, name := range []string{switches.NameBreaker, switches.NameRateLimit, switches.NameBackoff} {
		if switches.InLab(name, operator.Lab31) || !switches.InLab(name, operator.Lab44) {
			t.Errorf("%s: in 3.1 %v, in 4.4 %v", name, switches.InLab(name, operator.Lab31), switches.InLab(name, operator.Lab44))
		}
		if got := switches.OnlyIn(name); !slices.Equal(got, []string{operator.Lab44}) {
			t.Errorf("OnlyIn(%s) = %v", name, got)
		}
	}
	if switches.OnlyIn(switches.NameRequeue) != nil || switches.Belongs(switches.NameRequeue, operator.Lab31) != "" {
		t.Errorf("requeue is every lab's switch")
	}
}

func TestSwitchesOfALabRefuseTheOthersAndSayWhereTheyBelong(t *testing.T) {
	em := &collect{}
	s := switches.NewForLab(operator.Lab31, em)
	err := s.Apply("requeue=error,breaker=off")
	want := "switch breaker belongs to lab 4.4; lab 3.1's controller does not use it (switches of lab 3.1: requeue, external, flakiness, timescale, workers)"
	if err == nil || err.Error() != want {
		t.Fatalf("Apply(breaker=off) in 3.1: err = %v\nwant %s", err, want)
	}
	if s.Get() != switches.Defaults() || len(em.events) != 0 {
		t.Errorf("a refused Apply changed something: %+v, %d events", s.Get(), len(em.events))
	}
	if s.Has(switches.NameBreaker) || !s.Has(switches.NameExternal) {
		t.Errorf("Has: breaker %v, external %v", s.Has(switches.NameBreaker), s.Has(switches.NameExternal))
	}
	if err := s.Apply("requeue=error,external=down"); err != nil {
		t.Errorf("3.1's own switches: %v", err)
	}
	if err := s.Set("colour", "blue"); err == nil || !strings.Contains(err.Error(), "valid: requeue, external, flakiness, timescale, workers") {
		t.Errorf("unknown switch in 3.1: %v", err)
	}
	if err := switches.NewForLab(operator.Lab44, nil).Apply("breaker=off,ratelimit=off,backoff=controller"); err != nil {
		t.Errorf("4.4 reads them all: %v", err)
	}
}
