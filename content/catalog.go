package content

import (
	"fmt"
	"slices"
	"strings"

	"github.com/operator-lab/lab/operator/switches"
)

// Demo names what a section can show on the running reference operator: a
// `lab run` scenario and the pattern switches to set first. The TUI offers it
// as "press w to see this"; `lab read` prints the equivalent `lab run` command.
type Demo struct {
	Lab      string // lab whose operator shows it: "3.1" or "4.4"
	Scenario string // scenario to drive ("" = none, just the switches)
	// Switches are the settings the demo is about, in order: shown beside
	// it, and what `lab run` (which starts from the defaults) is given.
	Switches []Switch
	// Assumed are the lab's other switches at the values the lesson's text
	// takes for granted (lessonSpec.assumes). The live view sets them too,
	// so that whatever the learner left on, the operator tells the
	// section's story; a switch in neither list is left as it is.
	Assumed []Switch
}

// Settings are every switch the live view sets for the demo: its own,
// then the assumed ones.
func (d Demo) Settings() []Switch {
	return append(slices.Clip(d.Switches), d.Assumed...)
}

// Switch is one pattern switch setting of the reference operator.
type Switch struct {
	Name  string
	Value string
}

// String reads like "scenario external-outage, requeue=after".
func (d Demo) String() string {
	var parts []string
	if d.Scenario != "" {
		parts = append(parts, "scenario "+d.Scenario)
	}
	for _, s := range d.Switches {
		parts = append(parts, s.Name+"="+s.Value)
	}
	return strings.Join(parts, ", ")
}

// RunArgs are the lab arguments that show the demo headless:
// run <lab> [--scenario NAME] [--set k=v,...].
func (d Demo) RunArgs() []string {
	args := []string{"run", d.Lab}
	if d.Scenario != "" {
		args = append(args, "--scenario", d.Scenario)
	}
	if len(d.Switches) > 0 {
		settings := make([]string, len(d.Switches))
		for i, s := range d.Switches {
			settings[i] = s.Name + "=" + s.Value
		}
		args = append(args, "--set", strings.Join(settings, ","))
	}
	return args
}

// lessonSpec declares a lesson's sections, in reading order. Every language
// file must have exactly these sections (the loader enforces it), so section
// IDs are stable across languages and demos cannot drift between them.
type lessonSpec struct {
	id string
	// assumes are the switches whose default (switches.Defaults) the
	// lesson's text takes for granted wherever it does not say otherwise;
	// each demo of the lesson that does not set one itself gets it as
	// Assumed. Every lab's switch not named is the learner's to keep: the
	// timescale is the learner's pace (a demo that is timed sets it), and
	// workers is fixed once the operator runs.
	assumes  []string
	sections []sectionSpec
}

type sectionSpec struct {
	id   string
	demo *Demo
}

func demo(lab, scenario string, switches ...string) *Demo {
	d := &Demo{Lab: lab, Scenario: scenario}
	for _, s := range switches {
		name, value, ok := strings.Cut(s, "=")
		if !ok {
			panic(fmt.Sprintf("content: switch %q is not name=value", s))
		}
		d.Switches = append(d.Switches, Switch{Name: name, Value: value})
	}
	return d
}

// The scenario and switch names are those of the reference operator's
// `lab run` (operator issue): scenarios create, update-burst, delete,
// external-outage, flaky-external, not-found, permanent-error; switches
// requeue, breaker, ratelimit, backoff, external, timescale, workers.
//
// 3.1's operator reads only the requeue and external switches; its lesson
// has the dependency healthy and "not ready yet" as RequeueAfter. 4.4's
// lesson has every pattern on: RequeueAfter with a nil error, the lesson's
// backoff, the breaker and the rate limiter, against a healthy system.
var catalog = withAssumed([]lessonSpec{
	{id: "3.1", assumes: []string{switches.NameRequeue, switches.NameExternal}, sections: []sectionSpec{
		{id: "overview", demo: demo("3.1", "create")},
		{id: "manager"},
		{id: "controller", demo: demo("3.1", "create")},
		{id: "reconcile", demo: demo("3.1", "not-found")},
		{id: "work-queue", demo: demo("3.1", "update-burst")},
		{id: "result", demo: demo("3.1", "external-outage", "requeue=error")},
		{id: "requeue-strategies", demo: demo("3.1", "permanent-error", "requeue=terminal")},
		{id: "client", demo: demo("3.1", "create")},
		{id: "exercises"},
	}},
	{id: "4.4", assumes: []string{switches.NameRequeue, switches.NameBackoff, switches.NameBreaker,
		switches.NameRateLimit, switches.NameExternal}, sections: []sectionSpec{
		{id: "multi-phase", demo: demo("4.4", "create")},
		{id: "state-machine", demo: demo("4.4", "update-burst")},
		{id: "external-deps", demo: demo("4.4", "external-outage", "requeue=after")},
		{id: "idempotency", demo: demo("4.4", "update-burst")},
		{id: "rate-limiting", demo: demo("4.4", "create", "ratelimit=on", "external=ratelimited")},
		{id: "backoff", demo: demo("4.4", "external-outage", "backoff=lesson", "timescale=10")},
		{id: "circuit-breaker", demo: demo("4.4", "flaky-external", "breaker=on")},
		{id: "finalizers", demo: demo("4.4", "delete")},
		{id: "combined", demo: demo("4.4", "external-outage", "breaker=on", "ratelimit=on", "backoff=lesson", "timescale=10")},
		{id: "exercises"},
	}},
})

// withAssumed gives every demo the switches its lesson assumes and the demo
// does not set itself, at their defaults.
func withAssumed(lessons []lessonSpec) []lessonSpec {
	defaults := switches.Defaults()
	for _, l := range lessons {
		for _, s := range l.sections {
			if s.demo == nil {
				continue
			}
			for _, name := range l.assumes {
				if slices.ContainsFunc(s.demo.Switches, func(sw Switch) bool { return sw.Name == name }) {
					continue
				}
				value, err := defaults.Get(name)
				if err != nil {
					panic(fmt.Sprintf("content: lesson %s assumes switch %q: %v", l.id, name, err))
				}
				s.demo.Assumed = append(s.demo.Assumed, Switch{Name: name, Value: value})
			}
		}
	}
	return lessons
}

// LessonIDs lists the lessons, in course order.
func LessonIDs() []string {
	ids := make([]string, len(catalog))
	for i, l := range catalog {
		ids[i] = l.id
	}
	return ids
}

func findLesson(id string) (lessonSpec, error) {
	for _, l := range catalog {
		if l.id == id {
			return l, nil
		}
	}
	return lessonSpec{}, fmt.Errorf("unknown lesson %q: choose one of %s", id, strings.Join(LessonIDs(), ", "))
}
