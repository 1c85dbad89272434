package eventtext_test

import (
	"strings"
	"testing"
	"time"

	"github.com/operator-lab/lab/internal/eventtext"
	"github.com/operator-lab/lab/observe"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func TestLineShowsTheFieldsOfEachKind(t *testing.T) {
	prio := -100
	cases := []struct {
		e    observe.Event
		want []string
	}{
		{observe.Event{Kind: observe.KindWatch, Controller: "database", Key: "ns/db", Type: "MODIFIED", Object: "Database", ResourceVersion: "42", Generation: 2},
			[]string{"watch", "database", "ns/db", "MODIFIED Database rv=42 gen=2"}},
		{observe.Event{Kind: observe.KindQueueAddRateLimited, Key: "ns/db", Delay: observe.Duration(5 * time.Millisecond), Failures: 1, Priority: &prio},
			[]string{"queue.add_rate_limited", "delay=5ms failures=1 priority=-100"}},
		{observe.Event{Kind: observe.KindReconcileEnd, Result: "requeue_after", RequeueAfter: observe.Duration(5 * time.Second), DurationMs: 1.25},
			[]string{"reconcile.end", "requeue_after requeueAfter=5s took=1.2ms"}},
		{observe.Event{Kind: observe.KindReconcileEnd, Result: "error", Error: "boom"},
			[]string{`error error="boom"`}},
		{observe.Event{Kind: observe.KindClient, Verb: "create", Object: "Secret", Name: "db-credentials", Source: "api", Outcome: "ok"},
			[]string{"create Secret/db-credentials from=api → ok"}},
		{observe.Event{Kind: observe.KindPhase, From: "", To: "Pending"}, []string{"(none) → Pending"}},
		{observe.Event{Kind: observe.KindBreaker, From: "closed", To: "open", Failures: 5}, []string{"closed → open failures=5"}},
		{observe.Event{Kind: observe.KindCondition, Type: "Ready", Status: "False", Reason: "InProgress"}, []string{"Ready=False reason=InProgress"}},
		{observe.Event{Kind: observe.KindBackoff, Attempt: 3, Delay: observe.Duration(20 * time.Second)}, []string{"attempt=3 delay=20s"}},
		{observe.Event{Kind: observe.KindRateLimit, Wait: observe.Duration(time.Second)}, []string{"wait=1s"}},
		{observe.Event{Kind: observe.KindExternal, Op: "provision", Outcome: "unavailable", LatencyMs: 5.04}, []string{"provision → unavailable latency=5.0ms"}},
		{observe.Event{Kind: observe.KindSwitch, Name: "external", Value: "down"}, []string{"external=down"}},
		{observe.Event{Kind: observe.KindScenario, Name: "external-outage", Op: "set", Message: "external=down"}, []string{`external-outage set "external=down"`}},
	}
	for _, tc := range cases {
		tc.e.Time = at(0)
		line := eventtext.Line(tc.e, eventtext.Options{})
		for _, w := range tc.want {
			if !strings.Contains(line, w) {
				t.Errorf("Line(%s) = %q, want it to contain %q", tc.e.Kind, line, w)
			}
		}
		if strings.Contains(line, "\x1b[") || strings.Contains(line, "\n") {
			t.Errorf("Line(%s) = %q: colour or newline without asking", tc.e.Kind, line)
		}
	}
}

func TestLinesAlignAndColourOnlyWhenAsked(t *testing.T) {
	a := eventtext.Line(observe.Event{Time: at(0), Kind: observe.KindQueueGet, Controller: "database", Key: "ns/a"}, eventtext.Options{Start: t0})
	b := eventtext.Line(observe.Event{Time: at(1500), Kind: observe.KindReconcileEnd, Controller: "database", Key: "ns/a", Result: "success"}, eventtext.Options{Start: t0})
	if !strings.HasPrefix(a, "+0.000s") || !strings.HasPrefix(b, "+1.500s") {
		t.Errorf("relative times: %q / %q", a, b)
	}
	if strings.Index(a, "database") != strings.Index(b, "database") {
		t.Errorf("controller columns do not align:\n%s\n%s", a, b)
	}
	colored := eventtext.Line(observe.Event{Time: at(0), Kind: observe.KindReconcileEnd, Result: "error"}, eventtext.Options{Color: true})
	if !strings.Contains(colored, "\x1b[31merror") {
		t.Errorf("an error result is red with Color: %q", colored)
	}
}

func TestSummaryCountsAndTimesPhases(t *testing.T) {
	s := eventtext.NewSummary()
	key := "ns/db"
	for _, e := range []observe.Event{
		{Time: at(0), Kind: observe.KindWatch, Type: "ADDED", Key: key},
		{Time: at(1), Kind: observe.KindQueueAdd, Key: key},
		{Time: at(10), Kind: observe.KindPhase, Key: key, From: "", To: "Pending"},
		{Time: at(20), Kind: observe.KindReconcileEnd, Result: "success"},
		{Time: at(110), Kind: observe.KindPhase, Key: key, From: "Pending", To: "Provisioning"},
		{Time: at(120), Kind: observe.KindReconcileEnd, Result: "requeue_after"},
		{Time: at(130), Kind: observe.KindQueueAddAfter, Key: key},
		{Time: at(410), Kind: observe.KindPhase, Key: key, From: "Provisioning", To: "Ready"},
		{Time: at(500), Kind: observe.KindReconcileEnd, Result: "success"},
	} {
		s.Add(e)
	}
	var out strings.Builder
	if err := s.Write(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"summary: 9 events over 500ms",
		"reconciles:  success=2 requeue_after=1",
		"queue adds:  queue.add=1 queue.add_after=1",
		"phases:      Pending 100ms, Provisioning 300ms",
		"time to Ready: ns/db 410ms",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
}
