package scenario_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator"
	"github.com/operator-lab/lab/operator/internal/optest"
	"github.com/operator-lab/lab/operator/scenario"
)

func TestMain(m *testing.M) { os.Exit(optest.Main(m)) }

func TestUnknownNamesListTheValidOnes(t *testing.T) {
	_, err := scenario.Get("4.4", "explode")
	if err == nil || !strings.Contains(err.Error(), "valid: create, delete, external-outage, flaky-external, not-found, permanent-error, update-burst") {
		t.Errorf("unknown scenario: %v", err)
	}
	_, err = scenario.Get("9.9", "create")
	if err == nil || !strings.Contains(err.Error(), "labs: 3.1, 4.4") {
		t.Errorf("unknown lab: %v", err)
	}
}

// expectations say what a scenario must have made the operator do.
var expectations = map[string]func(t *testing.T, events []observe.Event){
	"create": func(t *testing.T, events []observe.Event) {
		requireEvent(t, events, "a successful reconcile", func(e observe.Event) bool {
			return e.Kind == observe.KindReconcileEnd && e.Result == observe.ResultSuccess
		})
	},
	"update-burst": func(t *testing.T, events []observe.Event) {
		updates := 0
		for _, e := range events {
			if e.Kind == observe.KindScenario && e.Op == "update" {
				updates++
			}
		}
		if updates != 5 {
			t.Errorf("%d update steps, want 5", updates)
		}
	},
	"delete": func(t *testing.T, events []observe.Event) {
		requireEvent(t, events, "a DELETED watch event", func(e observe.Event) bool {
			return e.Kind == observe.KindWatch && e.Type == "DELETED"
		})
	},
	"not-found": func(t *testing.T, events []observe.Event) {
		for _, e := range events {
			// A status write from an outdated copy is refused with a
			// Conflict, which the 3.1 controller returns: not this scenario's point.
			if e.Kind == observe.KindReconcileEnd && e.Result != observe.ResultSuccess && !optest.StatusConflict(events, e) {
				t.Errorf("a reconcile for a deleted object ended in %s: %s", e.Result, e.Error)
			}
		}
	},
	"permanent-error": func(t *testing.T, events []observe.Event) {
		requireEvent(t, events, "a terminal reconcile", func(e observe.Event) bool {
			return e.Kind == observe.KindReconcileEnd && e.Result == observe.ResultTerminal
		})
	},
	"external-outage": func(t *testing.T, events []observe.Event) {
		requireEvent(t, events, "an unavailable external call", func(e observe.Event) bool {
			return e.Kind == observe.KindExternal && e.Outcome == "unavailable"
		})
		requireEvent(t, events, "switching external back to healthy", func(e observe.Event) bool {
			return e.Kind == observe.KindSwitch && e.Name == "external" && e.Value == "healthy"
		})
	},
	"flaky-external": func(t *testing.T, events []observe.Event) {
		requireEvent(t, events, "a failed external call", func(e observe.Event) bool {
			return e.Kind == observe.KindExternal && e.Outcome == "unavailable"
		})
	},
}

func requireEvent(t *testing.T, events []observe.Event, what string, match func(observe.Event) bool) {
	t.Helper()
	if !slices.ContainsFunc(events, match) {
		t.Errorf("no %s\n%s", what, optest.Dump(events))
	}
}

// TestEveryScenarioRunsToItsEnd drives each scenario of each lab against the
// operator (timescale 100) and checks it finished and had its effect.
func TestEveryScenarioRunsToItsEnd(t *testing.T) {
	for _, lab := range operator.Labs() {
		names := scenario.Names(lab)
		if len(names) < 7 {
			t.Errorf("lab %s has scenarios %v, want at least the seven of the issue", lab, names)
		}
		for _, s := range scenario.All(lab) {
			t.Run(lab+"/"+s.Name, func(t *testing.T) {
				t.Parallel()
				set := "timescale=100"
				if s.Name == "flaky-external" {
					// Several calls in a row must succeed; the lesson
					// backoff grows to minutes: run it faster.
					set = "timescale=1000"
				}
				env := optest.Start(t, optest.Options{Lab: lab, Set: set})
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				err := s.Run(ctx, scenario.Env{Client: env.Client, Namespace: env.Namespace, Switches: env.Switches, Emitter: env.Bus})
				if err != nil {
					t.Fatalf("run: %v\n%s", err, optest.Dump(env.Recorder.Events()))
				}
				events := env.Recorder.Events()
				var steps []string
				for _, e := range events {
					if e.Kind == observe.KindScenario {
						if e.Name != s.Name {
							t.Errorf("scenario event named %q", e.Name)
						}
						steps = append(steps, e.Op)
					}
				}
				if len(steps) < 3 || steps[0] != "start" || steps[len(steps)-1] != "done" {
					t.Errorf("scenario steps = %v", steps)
				}
				if check, ok := expectations[s.Name]; ok {
					check(t, events)
				} else {
					t.Errorf("no expectation for scenario %s", s.Name)
				}
			})
		}
	}
}
