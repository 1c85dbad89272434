package observe_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/operator-lab/lab/observe"
)

// TestConstructorsWriteTheRecordedFormat: each constructor's event encodes
// to the JSON that recordings made before the constructors hold, so lab
// replay reads old and new traces alike.
func TestConstructorsWriteTheRecordedFormat(t *testing.T) {
	scope := observe.Scope{Controller: "database", Key: "ns/db", ReconcileID: "r1"}
	for _, tc := range []struct {
		e    observe.Event
		want string
	}{
		{observe.ClientEvent(observe.ClientCall{Verb: "get", Object: "Secret", Name: "s", Source: observe.SourceCache, Outcome: observe.OutcomeNotFound, Error: "gone"}),
			`"kind":"client","object":"Secret","error":"gone","verb":"get","name":"s","source":"cache","outcome":"notfound"`},
		{observe.PhaseEvent("Pending", "Provisioning"), `"kind":"phase","from":"Pending","to":"Provisioning"`},
		{observe.ConditionEvent(metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Down", Message: "m", ObservedGeneration: 3}),
			`"kind":"condition","type":"Ready","status":"False","reason":"Down","message":"m"`},
		{observe.BreakerEvent("closed", "open", 3), `"kind":"breaker","failures":3,"from":"closed","to":"open"`},
		{observe.BreakerOpenedEvent("closed", "open", 5, 6*time.Second), `"kind":"breaker","delay":"6s","failures":5,"from":"closed","to":"open"`},
		{observe.BreakerCountEvent("closed", 2), `"kind":"breaker","failures":2,"to":"closed"`},
		{observe.BreakerRefusedEvent("open", 5, 4200*time.Millisecond), `"kind":"breaker","delay":"4.2s","failures":5,"outcome":"refused","to":"open"`},
		{observe.BackoffEvent(2, time.Second), `"kind":"backoff","delay":"1s","attempt":2`},
		{observe.RateLimitEvent(1, 1500*time.Millisecond), `"kind":"ratelimit","wait":"1.5s","calls":1`},
		{observe.RateLimitEvent(2, 0), `"kind":"ratelimit","calls":2`},
		{observe.ExternalEvent(observe.ExternalCall{Op: "provision", Outcome: "unavailable", Latency: 5040 * time.Microsecond, Error: "down"}),
			`"kind":"external","error":"down","outcome":"unavailable","op":"provision","latencyMs":5.04`},
		{observe.SwitchEvent("external", "down"), `"kind":"switch","name":"external","value":"down"`},
		{observe.GateEvent(observe.GatePaused, observe.Scope{}), `"kind":"gate","value":"paused"`},
		{observe.GateEvent(observe.GateWaiting, scope), `"kind":"gate","controller":"database","key":"ns/db","reconcileID":"r1","value":"waiting"`},
		{observe.ScenarioEvent(observe.ScenarioStep{Actor: "you", Step: "create", Key: "ns/db-1", Message: "spec"}),
			`"kind":"scenario","key":"ns/db-1","name":"you","message":"spec","op":"create"`},
		{observe.SessionEvent("4.4", "lab-run-x"), `"kind":"session","lab":"4.4","namespace":"lab-run-x"`},
		{observe.RunnerReadyEvent(observe.Switch{Name: "external", Values: []string{"healthy", "down"}}, "healthy"),
			`"kind":"runner.ready","name":"external","value":"healthy","values":["healthy","down"]`},
	} {
		var buf bytes.Buffer
		if err := observe.NewEncoder(&buf).Encode(tc.e); err != nil {
			t.Fatal(err)
		}
		line := strings.TrimSpace(buf.String())
		body := strings.TrimSuffix(line[strings.Index(line, `"kind"`):], "}")
		if body != tc.want {
			t.Errorf("%s event encodes as\n %s\nwant\n %s", tc.e.Kind, body, tc.want)
		}
	}
}

// TestAccessorsReadWhatTheConstructorsWrote, after a trip through JSON
// Lines, and read nothing from events of other kinds.
func TestAccessorsReadWhatTheConstructorsWrote(t *testing.T) {
	client := observe.ClientCall{Verb: "create", Object: "Secret", Name: "creds", Source: observe.SourceAPI, Outcome: observe.OutcomeOK}
	external := observe.ExternalCall{Op: "deploy", Outcome: observe.OutcomeError, Latency: 1250 * time.Microsecond, Error: "reset"}
	cond := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Up", Message: "fine"}
	step := observe.ScenarioStep{Actor: "external-outage", Step: "set", Message: "external=down"}
	sw := observe.Switch{Name: "external", Values: []string{"healthy", "down", "flaky"}}
	events := roundTrip(t, []observe.Event{
		observe.ClientEvent(client),
		observe.ExternalEvent(external),
		observe.ConditionEvent(cond),
		observe.ScenarioEvent(step),
		observe.SwitchEvent("requeue", "after"),
		observe.GateEvent(observe.GateStep, observe.Scope{Key: "ns/a"}),
		observe.RunnerReadyEvent(sw, "down"),
		{Kind: observe.KindWatch, Type: observe.WatchDeleted, Name: "not-a-switch", Value: "not-a-gate-action"},
	})
	if got := events[0].ClientCall(); got != client {
		t.Errorf("ClientCall() = %+v, want %+v", got, client)
	}
	if got := events[1].ExternalCall(); got != external {
		t.Errorf("ExternalCall() = %+v, want %+v", got, external)
	}
	if got := events[2].Condition(); got != cond {
		t.Errorf("Condition() = %+v, want %+v", got, cond)
	}
	if got := events[3].ScenarioStep(); got != step {
		t.Errorf("ScenarioStep() = %+v, want %+v", got, step)
	}
	if name, value := events[4].Switch(); name != "requeue" || value != "after" {
		t.Errorf("Switch() = %q, %q", name, value)
	}
	if got := events[5].GateAction(); got != observe.GateStep {
		t.Errorf("GateAction() = %q, want %q", got, observe.GateStep)
	}
	if got, value := events[6].RunnerReady(); !reflect.DeepEqual(got, sw) || value != "down" {
		t.Errorf("RunnerReady() = %+v, %q", got, value)
	}
	watch := events[7]
	if watch.WatchType() != observe.WatchDeleted {
		t.Errorf("WatchType() = %q", watch.WatchType())
	}
	name, value := watch.Switch()
	runner, _ := watch.RunnerReady()
	if name != "" || value != "" || watch.GateAction() != "" || watch.ScenarioStep() != (observe.ScenarioStep{}) ||
		watch.ClientCall() != (observe.ClientCall{}) || watch.Condition() != (metav1.Condition{}) || runner.Name != "" {
		t.Errorf("a watch event's fields were read as another kind's")
	}
	if events[0].WatchType() != "" {
		t.Errorf("a client event has watch type %q", events[0].WatchType())
	}
}

func TestRunnerReadyEventOwnsItsValues(t *testing.T) {
	values := []string{"healthy", "down"}
	e := observe.RunnerReadyEvent(observe.Switch{Name: "external", Values: values}, "healthy")
	values[0] = "changed"
	if sw, _ := e.RunnerReady(); sw.Values[0] != "healthy" {
		t.Errorf("the event shares the caller's slice: %v", sw.Values)
	}
}

func TestDetailOfTheTypedKinds(t *testing.T) {
	for _, tc := range []struct {
		e    observe.Event
		want string
	}{
		{observe.GateEvent(observe.GateWaiting, observe.Scope{Key: "ns/a"}), "waiting"},
		{observe.ScenarioEvent(observe.ScenarioStep{Actor: "external-outage", Step: "set", Message: "external=down"}), `external-outage set "external=down"`},
		{observe.SwitchEvent("external", "down"), "external=down"},
		{observe.RunnerReadyEvent(observe.Switch{Name: "external", Values: []string{"healthy", "down"}}, "healthy"), "external=healthy values=healthy,down"},
		{observe.RunnerReadyEvent(observe.Switch{}, ""), ""},
		{observe.BreakerEvent("closed", "open", 5), "closed → open failures=5"},
		{observe.BreakerOpenedEvent("closed", "open", 5, 6*time.Second), "closed → open failures=5 probeIn=6s"},
		{observe.BreakerCountEvent("closed", 3), "closed failures=3"},
		{observe.BreakerCountEvent("closed", 0), "closed failures=0"},
		{observe.BreakerRefusedEvent("open", 5, 4200*time.Millisecond), "open failures=5 → refused probeIn=4.2s"},
		{observe.RateLimitEvent(2, 0), "calls=2 → allowed"},
		{observe.RateLimitEvent(1, time.Second), "calls=1 wait=1s"},
		{observe.Event{Kind: observe.KindRateLimit, Wait: observe.Duration(time.Second)}, "wait=1s"},
	} {
		if got := tc.e.Detail(); got != tc.want {
			t.Errorf("Detail(%s) = %q, want %q", tc.e.Kind, got, tc.want)
		}
	}
}

func roundTrip(t *testing.T, events []observe.Event) []observe.Event {
	t.Helper()
	var buf bytes.Buffer
	enc := observe.NewEncoder(&buf)
	for _, e := range events {
		e.V = observe.SchemaVersion // as the bus stamps it
		if err := enc.Encode(e); err != nil {
			t.Fatal(err)
		}
	}
	got, err := observe.ReadAll(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestOldBreakerAndRateLimitRecordingsReadAsTheyMeant: a trace recorded
// before breaker events carried counts and refusals, and before every
// rate-limiter check was reported, still reads: a transition without a
// cooldown, a wait of one call.
func TestOldBreakerAndRateLimitRecordingsReadAsTheyMeant(t *testing.T) {
	old := `{"v":1,"seq":7,"time":"2026-01-02T03:04:05Z","kind":"breaker","failures":5,"from":"closed","to":"open"}
{"v":1,"seq":8,"time":"2026-01-02T03:04:06Z","kind":"ratelimit","wait":"500ms"}
`
	events, err := observe.ReadAll(strings.NewReader(old))
	if err != nil {
		t.Fatal(err)
	}
	if got := events[0].Breaker(); got != (observe.BreakerUpdate{From: "closed", State: "open", Failures: 5}) || !got.Transition() {
		t.Errorf("old breaker event reads as %+v", got)
	}
	if got := events[1].RateLimit(); got != (observe.RateLimitCheck{Calls: 1, Wait: 500 * time.Millisecond}) {
		t.Errorf("old ratelimit event reads as %+v", got)
	}
	if events[0].RateLimit() != (observe.RateLimitCheck{}) || events[1].Breaker() != (observe.BreakerUpdate{}) {
		t.Errorf("an event of one kind was read as the other's")
	}
}

func TestBreakerAndRateLimitAccessorsAfterARoundTrip(t *testing.T) {
	events := roundTrip(t, []observe.Event{
		observe.BreakerOpenedEvent("half-open", "open", 6, 3*time.Second),
		observe.BreakerCountEvent("closed", 0),
		observe.BreakerRefusedEvent("half-open", 5, 0),
		observe.RateLimitEvent(2, 0),
	})
	want := []observe.BreakerUpdate{
		{From: "half-open", State: "open", Failures: 6, ProbeIn: 3 * time.Second},
		{State: "closed"},
		{State: "half-open", Failures: 5, Refused: true},
	}
	for i, w := range want {
		if got := events[i].Breaker(); got != w {
			t.Errorf("breaker event %d reads as %+v, want %+v", i, got, w)
		}
	}
	if events[1].Breaker().Transition() || events[2].Breaker().Transition() || !events[0].Breaker().Transition() {
		t.Errorf("Transition() is true only for a change of state")
	}
	if got := events[3].RateLimit(); got != (observe.RateLimitCheck{Calls: 2}) {
		t.Errorf("ratelimit check reads as %+v", got)
	}
}
