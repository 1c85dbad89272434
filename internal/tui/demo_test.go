package tui

import (
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/operator-lab/lab/content"
	"github.com/operator-lab/lab/internal/tui/synth"
	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator/api/v1alpha1"
)

// TestEveryLessonDemoRunsLive presses w in every section of both lessons
// that has a demo: its switches are set in order, then its scenario's step
// runs through Controls.
func TestEveryLessonDemoRunsLive(t *testing.T) {
	for _, lab := range content.LessonIDs() {
		lesson := mustLoad(t, lab, "en")
		for i, s := range lesson.Sections {
			if s.Demo == nil {
				continue
			}
			t.Run(lab+"/"+s.ID, func(t *testing.T) {
				fake := newFakeControls()
				m := newLessonModel(120, 40, clocktesting.NewFakePassiveClock(t0), fake, lab, "en")
				m = fold(m, lifecycleScript().Events())
				m, _ = press(m, "k") // select lab/db-1
				m = pressSettled(t, m, "L")
				for j := 0; j < i; j++ {
					m = pressSettled(t, m, ">")
				}
				before := map[string]string{}
				for _, sw := range fake.Switches() {
					before[sw.Name] = sw.Value
				}
				m, cmd := press(m, "w")
				if s.Demo.Scenario != "" {
					mustFail(t, cmd == nil, "w returned no command for scenario %s", s.Demo.Scenario)
					m = update(m, cmd())
				}
				want, ok := demoCalls[s.Demo.Scenario]
				if !ok {
					t.Fatalf("scenario %q has no expected calls: add it to demoSteps and here", s.Demo.Scenario)
				}
				// Every switch the demo declares that the fake has at another value.
				var switches []string
				for _, sw := range s.Demo.Settings() {
					if sw.Name == "external" && len(want) > 0 && strings.HasPrefix(want[0], "external=") {
						continue // the scenario's outage sets it
					}
					if before[sw.Name] != sw.Value {
						switches = append(switches, sw.Name+"="+sw.Value)
						before[sw.Name] = sw.Value
					}
				}
				if got, want := strings.Join(fake.Calls(), ","), strings.Join(append(switches, want...), ","); got != want {
					t.Fatalf("calls = %s, want %s", got, want)
				}
				if status := m.c.status.text; !strings.HasPrefix(status, "demo "+s.ID) || m.c.status.bad {
					t.Fatalf("status = %q (bad %v)", status, m.c.status.bad)
				}
			})
		}
	}
}

func TestOutageDemoEndsWithTheExternalSystemHealthy(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	fake := newFakeControls() // timescale 10: the 30s outage lasts 3s
	m := newLessonModel(120, 40, clock, fake, "4.4", "en")
	m = pressSettled(t, m, "L")
	m = pressSettled(t, m, ">")
	m = pressSettled(t, m, ">") // external-deps
	m, cmd := press(m, "w")
	m = update(m, cmd())
	if fake.value("external") != "down" || !strings.Contains(m.View(), "external healthy again in 3s") {
		t.Fatalf("external = %s; status: %s", fake.value("external"), m.c.status.text)
	}
	clock.SetTime(t0.Add(2900 * time.Millisecond))
	m = update(m, tickMsg(clock.Now()))
	if fake.value("external") != "down" {
		t.Fatal("the outage ended early")
	}
	clock.SetTime(t0.Add(3 * time.Second))
	m = update(m, tickMsg(clock.Now()))
	if fake.value("external") != "healthy" || !strings.Contains(m.View(), "external system is healthy again") {
		t.Fatalf("after 3s external = %s; status %q", fake.value("external"), m.c.status.text)
	}

	// Changed by hand during the outage: the demo leaves it alone.
	m, _ = press(m, "w") // stops the demo
	m, cmd = press(m, "w")
	m = update(m, cmd())
	m, _ = press(m, "e") // down → flaky
	clock.SetTime(clock.Now().Add(time.Minute))
	_ = update(m, tickMsg(clock.Now()))
	if fake.value("external") != "flaky" {
		t.Fatalf("external = %s, want the learner's flaky kept", fake.value("external"))
	}
}

// TestOutageDemoIsTimedAtTheTimescaleItSets: the backoff demo sets
// timescale=10, so its 30s outage lasts 3s even from timescale 1.
func TestOutageDemoIsTimedAtTheTimescaleItSets(t *testing.T) {
	fake := newFakeControls()
	if err := fake.SetSwitch("timescale", "1"); err != nil {
		t.Fatal(err)
	}
	m := newLessonModel(120, 40, clocktesting.NewFakePassiveClock(t0), fake, "4.4", "en")
	m = pressSettled(t, m, "L")
	for i := 0; i < 5; i++ {
		m = pressSettled(t, m, ">") // backoff
	}
	m, cmd := press(m, "w")
	m = update(m, cmd())
	if fake.value("timescale") != "10" || m.live.demo == nil || m.live.demo.outage == nil || m.live.demo.outage.until != t0.Add(3*time.Second) {
		t.Fatalf("timescale %s, demo %+v; status %q", fake.value("timescale"), m.live.demo, m.c.status.text)
	}
}

func TestDemoKeyIsOnlyOfferedWhereThereIsADemo(t *testing.T) {
	fake := newFakeControls()
	m := newLessonModel(80, 24, clocktesting.NewFakePassiveClock(t0), fake, "3.1", "en")
	m = pressSettled(t, m, "L")
	if !strings.Contains(m.View(), "w see this") {
		t.Fatal("the help line does not offer w on a section with a demo")
	}
	m = pressSettled(t, m, ">") // manager: no demo
	m, cmd := press(m, "w")
	if cmd != nil || len(fake.Calls()) != 0 || strings.Contains(m.View(), "w see this") {
		t.Fatalf("w acted on a section without a demo: calls %v", fake.Calls())
	}
	m, _ = press(m, "L")
	_, _ = press(m, "w")
	if len(fake.Calls()) != 0 {
		t.Fatal("w acted with the lesson closed")
	}
}

func TestDemoKeyIsDisabledInAReplay(t *testing.T) {
	m := New(Options{Header: Header{Lab: "4.4", Source: "trace.jsonl"}, Trace: lifecycleScript().Events(),
		Renderer: asciiRenderer(), Lang: "en"})
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40})
	m = pressSettled(t, m, "L")
	view := m.View()
	if !strings.Contains(view, "▶ demos run on a live lab, not in a replay: lab start 4.4") {
		t.Fatalf("no note about demos in a replay:\n%s", lessonFrame(t, view))
	}
	if m.lesson.keys.Demo.Enabled() || strings.Contains(view, "w see this") {
		t.Fatal("w is offered in a replay")
	}
	if helpLine := view[strings.LastIndex(view, "\n"):]; strings.Count(helpLine, "L close lesson") != 1 || !strings.Contains(helpLine, "→ next event") {
		t.Fatalf("help line %q", helpLine)
	}
	m, cmd := press(m, "w")
	if cmd != nil || m.c.status.text != "" {
		t.Fatalf("w did something in a replay: status %q", m.c.status.text)
	}
	// The replay keys still work with the lesson open.
	m, _ = press(m, "right")
	if m.replay.cursor != 1 {
		t.Fatalf("→ moved the replay to %d, want 1", m.replay.cursor)
	}
}

// openDemoSection opens the lesson at the section with the given ID.
func openDemoSection(t *testing.T, m Model, lab, id string) Model {
	t.Helper()
	m = pressSettled(t, m, "L")
	for i, s := range mustLoad(t, lab, m.lesson.lang).Sections {
		if s.ID == id {
			for j := 0; j < i; j++ {
				m = pressSettled(t, m, ">")
			}
			return m
		}
	}
	t.Fatalf("lesson %s has no section %s", lab, id)
	return m
}

// runDemoKey presses w and lets the demo's scenario make its change.
func runDemoKey(t *testing.T, m Model) Model {
	t.Helper()
	m, cmd := press(m, "w")
	if cmd == nil {
		t.Fatalf("w made no change; status %q", m.c.status.text)
	}
	return update(m, cmd())
}

// becomesReady is the step of a reconcile that reports the object Ready.
var becomesReady = synth.Condition(v1alpha1.ConditionReady, "True", v1alpha1.ReasonReconciled)

// settleObject folds a reconcile of key that succeeds and reports it
// Ready, then lets the view's clock run until the object has been quiet
// for settleFor.
func settleObject(m Model, clock *clocktesting.FakePassiveClock, key string) Model {
	sc := synth.New("database", clock.Now())
	sc.Add(key, sc.Watch("Database", key, "ADDED", 1))
	sc.Get(key)
	sc.Reconcile(key, synth.Success, becomesReady)
	m = fold(m, sc.Events())
	m = update(m, tickMsg(clock.Now()))
	clock.SetTime(clock.Now().Add(settleFor))
	return update(m, tickMsg(clock.Now()))
}

// setSwitches sets the learner's switches before a test, name=value each.
func setSwitches(t *testing.T, fake *fakeControls, settings ...string) {
	t.Helper()
	for _, s := range settings {
		name, value, _ := strings.Cut(s, "=")
		if err := fake.SetSwitch(name, value); err != nil {
			t.Fatal(err)
		}
	}
}

func (f *fakeControls) values(names ...string) string {
	var out []string
	for _, n := range names {
		out = append(out, n+"="+f.value(n))
	}
	return strings.Join(out, ",")
}

// TestDemoSetsWhatItsLessonAssumesAndPutsTheLearnersSwitchesBack: the
// breaker demo, run with the learner's requeue=requeue and rate limiter
// off, sets the switches the 4.4 lesson assumes as well as its own, says
// so, and puts the learner's back once its object has settled.
func TestDemoSetsWhatItsLessonAssumesAndPutsTheLearnersSwitchesBack(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	fake := newFakeControls()
	setSwitches(t, fake, "requeue=requeue", "breaker=off", "ratelimit=off")
	names := []string{"requeue", "breaker", "ratelimit", "backoff", "external", "timescale"}
	learners := fake.values(names...)
	m := newLessonModel(120, 40, clock, fake, "4.4", "en")
	m = openDemoSection(t, m, "4.4", "circuit-breaker")
	m = runDemoKey(t, m)

	if got, want := fake.values(names...), "requeue=after,breaker=on,ratelimit=on,backoff=lesson,external=flaky,timescale=10"; got != want {
		t.Fatalf("during the demo %s, want %s", got, want)
	}
	status := m.c.status.text
	for _, set := range []string{"breaker=on", "requeue=after", "ratelimit=on", "backoff=lesson", "external=flaky"} {
		mustFail(t, !strings.Contains(status, set), "the status does not say the demo set %s: %q", set, status)
	}
	pane := lessonFrame(t, m.View())
	mustFail(t, !strings.Contains(pane, "▶ demo running") || !strings.Contains(m.View(), "w stop demo"),
		"the pane does not say a demo is running, or w does not offer to stop it:\n%s", m.View())

	clock.SetTime(t0.Add(3 * time.Second)) // flaky for 30s at timescale 10
	m = update(m, tickMsg(clock.Now()))
	if fake.value("external") != "healthy" || m.live.demo == nil {
		t.Fatalf("after the flaky spell: external %s, demo %v", fake.value("external"), m.live.demo)
	}
	m = settleObject(m, clock, "lab/db-4") // the last of the three it made
	if got := fake.values(names...); got != learners || m.live.demo != nil {
		t.Fatalf("after the demo %s, want the learner's %s back (demo %v)", got, learners, m.live.demo)
	}
	if want := "demo circuit-breaker over: put back your breaker=off, requeue=requeue, backoff=controller, ratelimit=off"; m.c.status.text != want {
		t.Fatalf("status %q, want %q", m.c.status.text, want)
	}
}

// TestAnotherDemoBeforeTheRecoveryPutsTheWorldBack: starting a demo while
// an outage demo waits to bring the external system back does not leave
// it down: the new demo sets it as its lesson assumes, and when it ends
// the learner's own value (here slow) and switches are back.
func TestAnotherDemoBeforeTheRecoveryPutsTheWorldBack(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	fake := newFakeControls()
	setSwitches(t, fake, "requeue=requeue", "external=slow")
	names := []string{"requeue", "breaker", "ratelimit", "backoff", "external", "timescale"}
	learners := fake.values(names...)
	m := newLessonModel(120, 40, clock, fake, "4.4", "en")
	m = openDemoSection(t, m, "4.4", "external-deps")
	m = runDemoKey(t, m)
	if fake.value("external") != "down" {
		t.Fatalf("the outage demo left external %s", fake.value("external"))
	}
	clock.SetTime(t0.Add(2 * time.Second)) // 1s before the promised recovery
	m = update(m, tickMsg(clock.Now()))
	m = pressSettled(t, m, "<")
	m = pressSettled(t, m, "<") // multi-phase
	m = runDemoKey(t, m)
	if fake.value("external") != "healthy" {
		t.Fatalf("the second demo left external %s", fake.value("external"))
	}
	if status := m.c.status.text; !strings.HasPrefix(status, "demo multi-phase: replaces demo external-deps") || !strings.Contains(status, "external=healthy") {
		t.Fatalf("status %q", status)
	}
	clock.SetTime(t0.Add(10 * time.Second)) // long past the first demo's recovery
	m = update(m, tickMsg(clock.Now()))
	if fake.value("external") != "healthy" || m.live.demo == nil || m.live.demo.section != "multi-phase" {
		t.Fatalf("external %s, demo %+v", fake.value("external"), m.live.demo)
	}
	m = settleObject(m, clock, "lab/db-3")
	if got := fake.values(names...); got != learners {
		t.Fatalf("after both demos %s, want the learner's %s", got, learners)
	}
	if want := "demo multi-phase over: put back your requeue=requeue, backoff=controller, external=slow"; m.c.status.text != want {
		t.Fatalf("status %q, want %q", m.c.status.text, want)
	}
}

// TestWAgainStopsTheDemo: w on the section whose demo runs stops it and
// puts the switches back at once; the outage it promised to end is over.
func TestWAgainStopsTheDemo(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	fake := newFakeControls()
	m := newLessonModel(120, 40, clock, fake, "4.4", "en")
	m = openDemoSection(t, m, "4.4", "backoff")
	m = runDemoKey(t, m)
	m, cmd := press(m, "w")
	if cmd != nil || m.live.demo != nil {
		t.Fatalf("w again did not stop the demo: %+v", m.live.demo)
	}
	if got := fake.values("requeue", "backoff", "external"); got != "requeue=error,backoff=controller,external=healthy" {
		t.Fatalf("after stopping %s", got)
	}
	if want := "demo backoff stopped: put back your backoff=controller, requeue=error, external=healthy"; m.c.status.text != want {
		t.Fatalf("status %q, want %q", m.c.status.text, want)
	}
	if !strings.Contains(m.View(), "w see this") {
		t.Fatal("w does not offer the demo again")
	}
}

// TestASwitchMovedDuringADemoStaysTheLearners: a switch the learner moves
// while the demo runs is theirs; the demo does not put it back, and an
// external system they changed does not "recover".
func TestASwitchMovedDuringADemoStaysTheLearners(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	fake := newFakeControls()
	m := newLessonModel(120, 40, clock, fake, "4.4", "en")
	m = openDemoSection(t, m, "4.4", "external-deps")
	m = runDemoKey(t, m)
	m, _ = press(m, "r") // after → terminal
	if !strings.Contains(m.c.status.text, "yours now") {
		t.Fatalf("status %q", m.c.status.text)
	}
	m, _ = press(m, "e") // down → flaky
	clock.SetTime(t0.Add(time.Minute))
	m = update(m, tickMsg(clock.Now()))
	m = settleObject(m, clock, "lab/db-2")
	if got := fake.values("requeue", "backoff", "external"); got != "requeue=terminal,backoff=controller,external=flaky" {
		t.Fatalf("after the demo %s", got)
	}
}

// TestADemoIsNotOverWhileItsObjectIsBusy: between one reconcile and the
// next the queue is empty for a moment, and an object on its way to Ready
// may wait for a watch event; the demo ends only once its object is Ready
// and has been quiet for settleFor.
func TestADemoIsNotOverWhileItsObjectIsBusy(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	fake := newFakeControls()
	m := newLessonModel(120, 40, clock, fake, "4.4", "en")
	m = openDemoSection(t, m, "4.4", "multi-phase")
	m = runDemoKey(t, m)
	tick := func(d time.Duration) {
		clock.SetTime(clock.Now().Add(d))
		m = update(m, tickMsg(clock.Now()))
	}
	tick(5 * time.Second)
	mustFail(t, m.live.demo == nil, "over before its object was reconciled")

	sc := synth.New("database", clock.Now())
	sc.Add("lab/db-2", sc.Watch("Database", "lab/db-2", "ADDED", 1))
	sc.Get("lab/db-2")
	m = fold(m, sc.Take())
	tick(2 * time.Second)
	mustFail(t, m.live.demo == nil, "over while its reconcile runs")
	sc.Reconcile("lab/db-2", synth.Success)
	m = fold(m, sc.Take())
	tick(600 * time.Millisecond)
	tick(5 * time.Second)
	mustFail(t, m.live.demo == nil, "over before its object was Ready")
	// The status update's watch event brings the next phase's reconcile.
	sc.Add("lab/db-2", sc.Watch("Database", "lab/db-2", "MODIFIED", 1))
	sc.Get("lab/db-2")
	sc.Reconcile("lab/db-2", synth.Success, becomesReady)
	m = fold(m, sc.Take())
	tick(600 * time.Millisecond)
	mustFail(t, m.live.demo == nil, "over %s after a reconcile", settleFor)
	tick(settleFor)
	mustFail(t, m.live.demo != nil, "not over after %s of quiet", settleFor)
}

func TestDemoSpeaksTheLessonsLanguage(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	fake := newFakeControls()
	m := newLessonModel(120, 40, clock, fake, "4.4", "ru")
	m = openDemoSection(t, m, "4.4", "external-deps")
	m = runDemoKey(t, m)
	if status := m.c.status.text; !strings.HasPrefix(status, "демонстрация external-deps: выставлено requeue=after") {
		t.Fatalf("status %q", status)
	}
	if pane := lessonFrame(t, m.View()); !strings.Contains(pane, "▶ демонстрация идёт") {
		t.Fatalf("demo line:\n%s", pane)
	}
	m, _ = press(m, "w")
	if status := m.c.status.text; !strings.HasPrefix(status, "демонстрация external-deps остановлена: возвращены ваши значения requeue=error") {
		t.Fatalf("status %q", status)
	}
}

// TestDemoOnALearnersController: the learner's controller has only its
// world's external switch, with states of its own. A demo sets what of its
// lesson's assumptions that switch can take, skips the rest, and says so
// when the switch it is about is missing.
func TestDemoOnALearnersController(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	fake := newFakeControls()
	fake.switches = []Switch{{Name: "external", Value: "not-ready", Options: []string{"healthy", "not-ready", "failing", "ratelimited"}}}
	m := newLessonModel(120, 40, clock, fake, "3.1", "en")
	m = openDemoSection(t, m, "3.1", "overview")
	m = runDemoKey(t, m)
	if got := strings.Join(fake.Calls(), ","); got != "external=healthy,create" {
		t.Fatalf("calls %s", got)
	}
	m, _ = press(m, "w") // stop: the learner's not-ready comes back
	if fake.value("external") != "not-ready" {
		t.Fatalf("external %s after the demo", fake.value("external"))
	}
	m = pressSettled(t, m, ">")
	for m.lesson.section < 5 { // result: about requeue=error
		m = pressSettled(t, m, ">")
	}
	m, cmd := press(m, "w")
	if cmd != nil || !m.c.status.bad || m.c.status.text != "demo result needs the requeue switch, which the running controller does not have" {
		t.Fatalf("status %q (bad %v)", m.c.status.text, m.c.status.bad)
	}
}

// TestAPermanentErrorDemoEndsWhenTheObjectIsRejected: the object of the
// permanent-error demo is never Ready; once its reconcile has returned a
// TerminalError and it has rested, the demo is over.
func TestAPermanentErrorDemoEndsWhenTheObjectIsRejected(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	fake := newFakeControls()
	m := newLessonModel(120, 40, clock, fake, "3.1", "en")
	m = openDemoSection(t, m, "3.1", "requeue-strategies")
	m = runDemoKey(t, m)
	if fake.value("requeue") != "terminal" {
		t.Fatalf("requeue %s during the demo", fake.value("requeue"))
	}
	sc := synth.New("helloworld", clock.Now())
	sc.Add("lab/db-2", sc.Watch("HelloWorld", "lab/db-2", "ADDED", 1))
	sc.Get("lab/db-2")
	sc.Reconcile("lab/db-2", synth.Outcome{Result: observe.ResultTerminal, Error: "spec.count is 11, at most 10 is supported"})
	m = fold(m, sc.Take())
	m = update(m, tickMsg(clock.Now()))
	clock.SetTime(clock.Now().Add(settleFor))
	m = update(m, tickMsg(clock.Now()))
	if m.live.demo != nil || fake.value("requeue") != "error" {
		t.Fatalf("demo %+v, requeue %s", m.live.demo, fake.value("requeue"))
	}
}
