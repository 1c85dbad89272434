package scenario_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator-lab/lab/content"
	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator/internal/optest"
	"github.com/operator-lab/lab/operator/scenario"
)

// walkthroughTimescale runs the walkthroughs a hundred times faster than
// the lesson tells them; the delays are compared in operator time.
const walkthroughTimescale = 100

// TestLessonWalkthroughsMatchTheOperator replays every content.Walkthrough
// through the reference operator's scenario and checks what the lesson says
// the learner sees: the phases in order, the conditions and their reasons,
// the retry delays and the breaker's transitions.
func TestLessonWalkthroughsMatchTheOperator(t *testing.T) {
	if len(content.Walkthroughs) == 0 {
		t.Fatal("no walkthroughs")
	}
	for _, w := range content.Walkthroughs {
		t.Run(w.ID, func(t *testing.T) {
			t.Parallel()
			s, err := scenario.Get(w.Lesson, w.Scenario)
			if err != nil {
				t.Fatal(err)
			}
			if w.Outage > 0 {
				if s.External == "" {
					t.Fatalf("walkthrough %s sets an outage, but scenario %s breaks nothing", w.ID, w.Scenario)
				}
				s.Recover = w.Outage
			}
			set := append(slices.Clone(w.Switches), fmt.Sprintf("timescale=%d", walkthroughTimescale))
			env := optest.Start(t, optest.Options{Lab: w.Lesson, Set: strings.Join(set, ",")})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			// The outage is timed from the scenario's start: start it once
			// the operator is up, not while its cache is still syncing.
			if !env.Manager.GetCache().WaitForCacheSync(ctx) {
				t.Fatal("the operator's cache did not sync")
			}
			// The first create of the kind can take the API server seconds:
			// make it now, as a dry run.
			warm, _, err := scenario.Reference(w.Lesson).New(env.Namespace, "warm-up", false)
			if err != nil {
				t.Fatal(err)
			}
			if err := env.Client.Create(ctx, warm, client.DryRunAll); err != nil {
				t.Fatalf("warm-up create: %v", err)
			}
			if err := s.Run(ctx, scenario.Env{Client: env.Client, Namespace: env.Namespace, Switches: env.Switches, Emitter: env.Bus}); err != nil {
				t.Fatalf("run: %v\n%s", err, optest.Dump(env.Recorder.Events()))
			}
			events := env.Recorder.Events()
			got := observed(events)
			if n := w.RepeatLast; n > 0 && len(w.Phases) >= n {
				tail := w.Phases[len(w.Phases)-n:]
				for len(got.phases) >= len(w.Phases)+n && slices.Equal(got.phases[len(got.phases)-n:], tail) &&
					slices.Equal(got.phases[len(got.phases)-2*n:len(got.phases)-n], tail) {
					got.phases = got.phases[:len(got.phases)-n]
				}
			}
			if !slices.Equal(got.phases, w.Phases) {
				t.Errorf("phases:\n got  %v\n want %v", got.phases, w.Phases)
			}
			for _, typ := range slices.Sorted(maps.Keys(w.Conditions)) {
				if g := got.conditions[typ]; !slices.Equal(g, w.Conditions[typ]) {
					t.Errorf("condition %s:\n got  %v\n want %v", typ, g, w.Conditions[typ])
				}
			}
			if !slices.Equal(got.delays, w.Delays) {
				t.Errorf("retry delays (operator time):\n got  %v\n want %v", got.delays, w.Delays)
			}
			if !slices.Equal(got.breaker, w.Breaker) {
				t.Errorf("breaker:\n got  %v\n want %v", got.breaker, w.Breaker)
			}
			if n := len(w.External); w.RepeatLastCall && n > 0 {
				for len(got.external) > n && got.external[len(got.external)-1] == w.External[n-1] {
					got.external = got.external[:len(got.external)-1]
				}
			}
			if w.External != nil && !slices.Equal(got.external, w.External) {
				t.Errorf("external calls:\n got  %v\n want %v", got.external, w.External)
			}
			if w.Gone != got.gone {
				t.Errorf("object deleted by the end: got %v, want %v", got.gone, w.Gone)
			}
			if t.Failed() {
				t.Logf("events:\n%s", optest.Dump(events))
			}
		})
	}
}

type observation struct {
	phases     []string
	conditions map[string][]content.ConditionStep
	delays     []time.Duration
	breaker    []string
	external   []string
	// gone: the operator watched the object's deletion (its last finalizer
	// was removed and the API server deleted it).
	gone bool
}

// observed folds the events of the walkthrough's object (the first one
// whose phase changes) and of the breaker into what the data describes.
//
// The external calls of a reconcile whose status write hit a Conflict are
// left out: the operator makes that move again from a fresh read (the
// cache trailed its previous write), so the calls are repeated, and how
// often depends on the machine's load, not on what the lesson describes.
func observed(events []observe.Event) observation {
	o := observation{conditions: map[string][]content.ConditionStep{}}
	key := ""
	calls := map[string][]string{} // reconcile ID → its external calls, until it ends
	conflicted := map[string]bool{}
	for _, e := range events {
		if e.Kind == observe.KindPhase && key == "" {
			key = e.Key
		}
		switch {
		case e.Kind == observe.KindBreaker && e.Breaker().Transition():
			o.breaker = append(o.breaker, e.From+"→"+e.To)
		case e.Key != key || key == "":
		case e.Kind == observe.KindPhase:
			o.phases = append(o.phases, e.From+"→"+e.To)
		case e.Kind == observe.KindCondition:
			c := e.Condition()
			step := content.ConditionStep{Status: string(c.Status), Reason: c.Reason}
			if prev := o.conditions[c.Type]; len(prev) == 0 || prev[len(prev)-1] != step {
				o.conditions[c.Type] = append(prev, step)
			}
		case e.Kind == observe.KindExternal && e.ReconcileID == "":
			o.external = append(o.external, e.ExternalCall().Op)
		case e.Kind == observe.KindExternal:
			calls[e.ReconcileID] = append(calls[e.ReconcileID], e.ExternalCall().Op)
		case e.Kind == observe.KindClient && strings.HasPrefix(e.Verb, "status.") && e.Outcome == observe.OutcomeConflict:
			conflicted[e.ReconcileID] = true
		case e.Kind == observe.KindReconcileEnd:
			if !conflicted[e.ReconcileID] {
				o.external = append(o.external, calls[e.ReconcileID]...)
			}
			delete(calls, e.ReconcileID)
		case e.Kind == observe.KindWatch && e.Type == observe.WatchDeleted:
			o.gone = true
		case e.Kind == observe.KindBackoff:
			// Scaled and rounded up to a readable unit: back to operator
			// time, to the second.
			o.delays = append(o.delays, (time.Duration(e.Delay) * walkthroughTimescale).Round(time.Second))
		}
	}
	return o
}
