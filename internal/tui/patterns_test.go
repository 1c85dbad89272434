package tui

import (
	"slices"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/operator-lab/lab/internal/l10n"
	"github.com/operator-lab/lab/internal/tui/state"
	"github.com/operator-lab/lab/internal/tui/synth"
	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator/switches"
	"github.com/operator-lab/lab/operator/world"
)

// newFakeControlsFor is the fake lab's board as lab's reference operator
// offers it: only the switches its controller reads (switches.InLab).
func newFakeControlsFor(lab string) *fakeControls {
	f := newFakeControls()
	var board []Switch
	for _, s := range f.switches {
		if switches.InLab(s.Name, lab) {
			board = append(board, s)
		}
	}
	f.switches = board
	return f
}

// newLab31Model is lab 3.1's live view at w×h with the fake lab behind it.
func newLab31Model(w, h int, clock *clocktesting.FakePassiveClock, controls Controls) Model {
	return newLessonModel(w, h, clock, controls, "3.1", "en")
}

// helloWorlds is lab 3.1 as its operator reports it: a HelloWorld made
// Ready, and a second one failing while the external system is down,
// retried by the queue's rate limiter.
func helloWorlds() *synth.Script {
	sc := synth.New("helloworld", t0.Add(time.Second))
	key := "lab/hello-1"
	sc.Add(key, sc.Watch("HelloWorld", key, "ADDED", 1))
	sc.Get(key)
	sc.Reconcile(key, synth.Success,
		synth.Client("get", "HelloWorld", "hello-1", observe.SourceCache, observe.OutcomeOK),
		synth.External(world.OpHealthCheck, observe.OutcomeOK, 5*time.Millisecond),
		synth.Client("get", "ConfigMap", "hello-1-greeting", observe.SourceCache, observe.OutcomeNotFound),
		synth.Client("create", "ConfigMap", "hello-1-greeting", observe.SourceAPI, observe.OutcomeOK),
		synth.Condition("Ready", "True", "Reconciled"),
		synth.Client("status.update", "HelloWorld", "hello-1", observe.SourceAPI, observe.OutcomeOK))
	sc.Emit(observe.SwitchEvent(switches.NameExternal, string(switches.ExternalDown)))
	failing := "lab/hello-2"
	sc.Add(failing, sc.Watch("HelloWorld", failing, "ADDED", 1))
	for i := 0; i < 4; i++ {
		sc.Get(failing)
		delay := 5 * time.Millisecond << i
		sc.Reconcile(failing, synth.Failed("not done yet: external system unavailable", i+1, delay),
			synth.Client("get", "HelloWorld", "hello-2", observe.SourceCache, observe.OutcomeOK),
			synth.External(world.OpHealthCheck, observe.OutcomeError, 5*time.Millisecond),
			synth.Condition("Ready", "False", "Unavailable"))
		sc.Advance(delay)
	}
	return sc
}

// TestLab31ShowsNoPatternItsControllerDoesNotUse: lab 3.1's HelloWorld
// controller calls its dependency directly, through no breaker, limiter or
// lesson backoff, and its objects have no phases: none of that is drawn,
// offered in the footer or the help, and b says where the breaker belongs.
func TestLab31ShowsNoPatternItsControllerDoesNotUse(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	fake := newFakeControlsFor("3.1")
	m := newLab31Model(120, 40, clock, fake)
	sc := helloWorlds()
	m = fold(m, sc.Events())
	clock.SetTime(sc.Now().Add(300 * time.Millisecond))
	view := m.View()
	for _, absent := range []string{"Circuit breaker", "Rate limiter", "breaker=", "ratelimit=", "backoff=",
		"state machine", "no phase reported yet", "lesson backoff", "Objects & phases", "b breaker"} {
		if strings.Contains(view, absent) {
			t.Errorf("lab 3.1's view shows %q:\n%s", absent, view)
		}
	}
	for _, present := range []string{"External system", "External system down", "Objects", "rate limiter"} {
		if !strings.Contains(view, present) {
			t.Errorf("lab 3.1's view lacks %q:\n%s", present, view)
		}
	}

	for _, k := range []struct{ key, name string }{{"b", "breaker"}, {"l", "ratelimit"}, {"o", "backoff"}} {
		m, _ = press(m, k.key)
		want := k.key + " does nothing here: switch " + k.name + " belongs to lab 4.4; lab 3.1's controller does not use it"
		if m.c.status.text != want || !m.c.status.bad {
			t.Errorf("%s in lab 3.1: status %q, want %q", k.key, m.c.status.text, want)
		}
	}
	if calls := fake.Calls(); len(calls) != 0 {
		t.Errorf("keys of switches lab 3.1 lacks reached the lab: %v", calls)
	}

	m, _ = press(m, "?")
	help := m.View()
	for _, absent := range []string{"breaker", "ratelimit", "backoff:"} {
		if strings.Contains(help, absent) {
			t.Errorf("lab 3.1's help lists %q:\n%s", absent, help)
		}
	}
	if !strings.Contains(help, "requeue: error → requeue → after → terminal") || !strings.Contains(help, "external: the external system's health") {
		t.Errorf("lab 3.1's help lost its own switches:\n%s", help)
	}
}

// TestGoldenLab31Dashboard120x40: lab 3.1 at 120×40: no breaker, limiter
// or phase pane, the external system's calls, the queue's retries.
func TestGoldenLab31Dashboard120x40(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	m := newLab31Model(120, 40, clock, newFakeControlsFor("3.1"))
	sc := helloWorlds()
	m = fold(m, sc.Events())
	clock.SetTime(sc.Now().Add(300 * time.Millisecond))
	golden.RequireEqual(t, m.View())
}

// patternsView is the breaker · limiter · external pane as drawn now.
func patternsView(m Model) string {
	return strings.Join(m.dash.panes[panePatterns].View(), "\n")
}

// TestBreakerPaneShowsTheCountTheCountdownAndEachTransition: the count
// moves with every failure, the open breaker counts down to its probe,
// refused calls are counted, and every transition — half-open too, which
// lasts as long as the probe — stays visible with how long ago it was.
func TestBreakerPaneShowsTheCountTheCountdownAndEachTransition(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	m := newLiveModel(120, 40, clock, newFakeControls())
	sc := synth.New("database", t0.Add(time.Second))
	key := "lab/db-1"
	for i := 1; i <= 4; i++ {
		sc.Get(key)
		sc.Reconcile(key, synth.After(time.Second),
			synth.External(world.OpHealthCheck, observe.OutcomeError, 10*time.Millisecond),
			synth.BreakerCount(state.BreakerClosed, i))
	}
	m = fold(m, sc.Take())
	clock.SetTime(sc.Now())
	if pane := patternsView(m); !strings.Contains(pane, "failures 4") {
		t.Fatalf("after 4 failures below the threshold:\n%s", pane)
	}

	sc.Get(key)
	sc.Reconcile(key, synth.After(time.Second),
		synth.External(world.OpHealthCheck, observe.OutcomeError, 10*time.Millisecond),
		synth.Breaker(state.BreakerClosed, state.BreakerOpen, 5, 6*time.Second))
	m = fold(m, sc.Take())
	clock.SetTime(sc.Now().Add(time.Second))
	if pane := patternsView(m); !strings.Contains(pane, "failures 5 · next probe in 5s") || !strings.Contains(pane, "[open]") {
		t.Fatalf("a second after opening with a 6s cooldown:\n%s", pane)
	}

	sc.Advance(2 * time.Second)
	sc.Get(key)
	sc.Reconcile(key, synth.After(time.Second), synth.BreakerRefused(state.BreakerOpen, 5, 4*time.Second))
	m = fold(m, sc.Take())
	clock.SetTime(sc.Now().Add(500 * time.Millisecond))
	if pane := patternsView(m); !strings.Contains(pane, "Circuit breaker on · 1 call refused") || !strings.Contains(pane, "failures 5 · next probe in 3.5s") {
		t.Fatalf("after a refused call:\n%s", pane)
	}

	sc.Advance(4 * time.Second)
	sc.Get(key)
	sc.Reconcile(key, synth.Success,
		synth.Breaker(state.BreakerOpen, state.BreakerHalfOpen, 5, 0),
		synth.External(world.OpHealthCheck, observe.OutcomeOK, 10*time.Millisecond),
		synth.Breaker(state.BreakerHalfOpen, state.BreakerClosed, 0, 0))
	m = fold(m, sc.Take())
	clock.SetTime(sc.Now().Add(2 * time.Second))
	pane := patternsView(m)
	if !strings.Contains(pane, "[closed]") || !strings.Contains(pane, "  failures 0\n") ||
		!strings.Contains(pane, "open 8s › half-open 2s › closed 2s ago") {
		t.Fatalf("after the probe closed it again:\n%s", pane)
	}
}

// TestRateLimiterPaneCountsEveryCall: the calls let through at once count
// too, so the fraction that waited is the true one; a trace recorded when
// only waits were reported says how many waited, and no fraction.
func TestRateLimiterPaneCountsEveryCall(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	m := newLiveModel(120, 40, clock, newFakeControls())
	sc := synth.New("database", t0.Add(time.Second))
	sc.Get("lab/db-1")
	sc.Reconcile("lab/db-1", synth.Success, synth.RateLimitCheck(2, 0))
	sc.Get("lab/db-2")
	sc.Reconcile("lab/db-2", synth.After(250*time.Millisecond), synth.RateLimitCheck(2, 250*time.Millisecond))
	sc.Get("lab/db-1")
	sc.Reconcile("lab/db-1", synth.Success, synth.RateLimitCheck(1, 0))
	m = fold(m, sc.Events())
	if pane := patternsView(m); !strings.Contains(pane, "2 of 5 calls waited · last wait 250ms") {
		t.Fatalf("two checks let 3 calls through, one made 2 wait:\n%s", pane)
	}

	old := newLiveModel(120, 40, clock, newFakeControls())
	old = fold(old, []observe.Event{{Kind: observe.KindRateLimit, Time: t0, Wait: observe.Duration(time.Second)}})
	if pane := patternsView(old); !strings.Contains(pane, "1 calls waited · last wait 1s") || strings.Contains(pane, " of ") {
		t.Fatalf("an old trace's waits:\n%s", pane)
	}
}

// TestBreakerAndLimiterStepsSayWhatHappened: in the reconcile sequence, a
// refusal is a step of its own, and so is each limiter check.
func TestBreakerAndLimiterStepsSayWhatHappened(t *testing.T) {
	for _, tc := range []struct {
		e    observe.Event
		want string
	}{
		{observe.BreakerRefusedEvent(state.BreakerOpen, 5, 4230*time.Millisecond), "breaker open: call refused · probe in 4.2s"},
		{observe.BreakerRefusedEvent(state.BreakerHalfOpen, 5, 0), "breaker half-open: call refused"},
		{observe.BreakerOpenedEvent(state.BreakerClosed, state.BreakerOpen, 5, 6*time.Second), "breaker closed → open (failures 5)"},
		{observe.BreakerEvent(state.BreakerOpen, state.BreakerHalfOpen, 5), "breaker open → half-open (failures 5)"},
		{observe.BreakerCountEvent(state.BreakerClosed, 3), "breaker closed · failures 3"},
		{observe.RateLimitEvent(2, 0), "rate limiter: 2 calls allowed at once"},
		{observe.RateLimitEvent(1, 50*time.Millisecond), "rate limiter: a call must wait 50ms"},
	} {
		got := breakerStep(l10n.Printer{}, tc.e)
		if tc.e.Kind == observe.KindRateLimit {
			got = rateLimitStep(l10n.Printer{}, tc.e)
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.e.Detail(), got, tc.want)
		}
	}
}

// TestRetryDelaysExplainTheLimiterResettingTheBackoff: with the breaker
// off and the limiter on, a failing Database alternates between a limiter
// wait (a RequeueAfter, which the queue answers with Forget) and an error
// whose rate-limited retry starts again at failure 1. The bars alone look
// like a backoff that forgot to grow; the pane names the wait as the
// limiter's and says why the backoff never grows (#16 item 6).
func TestRetryDelaysExplainTheLimiterResettingTheBackoff(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	m := newLiveModel(120, 40, clock, newFakeControls())
	sc := synth.New("database", t0.Add(time.Second))
	for range 3 {
		sc.Get("lab/db-1")
		sc.Reconcile("lab/db-1", synth.Failed("external system unavailable", 1, 5*time.Millisecond),
			synth.RateLimitCheck(2, 0), synth.External("healthcheck", observe.OutcomeError, 20*time.Millisecond))
		sc.Get("lab/db-1")
		sc.Reconcile("lab/db-1", synth.After(250*time.Millisecond), synth.RateLimitCheck(2, 250*time.Millisecond))
	}
	m = fold(m, sc.Events())
	pane := strings.Join(m.dash.panes[paneBackoff].View(), "\n")
	t.Log("\n" + pane)
	for _, want := range []string{"RequeueAfter · limiter wait", "the queue Forgets the key for it", "never grows"} {
		if !strings.Contains(pane, want) {
			t.Errorf("the retry delays pane lacks %q:\n%s", want, pane)
		}
	}

	// A backoff that grows, with no limiter wait between, has no such note.
	grows := newLiveModel(120, 40, clock, newFakeControls())
	sc = synth.New("database", t0.Add(time.Second))
	for n := 1; n <= 4; n++ {
		sc.Get("lab/db-1")
		sc.Reconcile("lab/db-1", synth.Failed("external system unavailable", n, 5*time.Millisecond<<n))
	}
	grows = fold(grows, sc.Events())
	if pane := strings.Join(grows.dash.panes[paneBackoff].View(), "\n"); strings.Contains(pane, "never grows") || strings.Contains(pane, "limiter wait") {
		t.Errorf("a growing backoff is explained as a reset:\n%s", pane)
	}
}

// TestShiftCCreatesAnObjectTheControllerMustReject: C reaches the
// controller's give-up branch (a TerminalError) without kubectl — in
// --mine, the learner's own — and says so; c still creates a valid one.
func TestShiftCCreatesAnObjectTheControllerMustReject(t *testing.T) {
	fake := newFakeControlsFor("3.1")
	m := newLab31Model(120, 40, clocktesting.NewFakePassiveClock(t0), fake)
	for _, k := range []string{"C", "c"} {
		var cmd tea.Cmd
		if m, cmd = press(m, k); cmd == nil {
			t.Fatalf("%s did nothing", k)
		}
		cmd() // the action, run as bubbletea would
	}
	if calls := fake.Calls(); !slices.Equal(calls, []string{"create-invalid", "create"}) {
		t.Fatalf("C then c called %v, want create-invalid then create", calls)
	}
	m, _ = press(m, "?")
	if help := m.View(); !strings.Contains(help, "c/C       create: another object (C: an invalid one)") {
		t.Errorf("the help does not offer C:\n%s", help)
	}
}

// TestRetryDelaysTellTheRestOfALessonBackoffWait: a lesson-backoff retry
// is followed by a RequeueAfter for the rest of its wait when the
// controller's own status write woke the key early; the second row says
// so, as it is the same retry, not a new one (#16, the UX audit's 11).
func TestRetryDelaysTellTheRestOfALessonBackoffWait(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	m := newLiveModel(120, 40, clock, newFakeControls())
	sc := synth.New("database", t0.Add(time.Second))
	sc.Add("lab/db-1", sc.Watch("Database", "lab/db-1", "ADDED", 1))
	sc.Get("lab/db-1")
	sc.Reconcile("lab/db-1", synth.After(5*time.Second), synth.Backoff(1, 5*time.Second))
	sc.Add("lab/db-1", sc.Watch("Database", "lab/db-1", "MODIFIED", 1)) // its status write
	sc.Get("lab/db-1")
	sc.Reconcile("lab/db-1", synth.After(4900*time.Millisecond))
	m = fold(m, sc.Events())
	pane := strings.Join(m.dash.panes[paneBackoff].View(), "\n")
	// The pane is narrow here: the short labels ("lesson #1", "After rest").
	if !strings.Contains(pane, "lesson #1") || !strings.Contains(pane, "After rest") {
		t.Errorf("the retry delays pane does not tie the rest of the wait to the lesson backoff's retry:\n%s", pane)
	}
}
