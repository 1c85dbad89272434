package tui

import (
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/operator-lab/lab/content"
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
				m, cmd := press(m, "w")
				if s.Demo.Scenario != "" {
					mustFail(t, cmd == nil, "w returned no command for scenario %s", s.Demo.Scenario)
					m = update(m, cmd())
				}
				want, ok := demoCalls[s.Demo.Scenario]
				if !ok {
					t.Fatalf("scenario %q has no expected calls: add it to demoSteps and here", s.Demo.Scenario)
				}
				var switches []string
				for _, sw := range s.Demo.Switches {
					switches = append(switches, sw.Name+"="+sw.Value)
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
	m, cmd = press(m, "w")
	m = update(m, cmd())
	m, _ = press(m, "e") // down → flaky
	clock.SetTime(clock.Now().Add(time.Minute))
	m = update(m, tickMsg(clock.Now()))
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
	if fake.value("timescale") != "10" || m.live.outage == nil || m.live.outage.until != t0.Add(3*time.Second) {
		t.Fatalf("timescale %s, outage %+v; status %q", fake.value("timescale"), m.live.outage, m.c.status.text)
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
	m, _ = press(m, "w")
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
