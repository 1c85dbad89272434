package tui

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/operator-lab/lab/internal/tui/synth"
	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator/world"
)

// historyScript: 100 Databases, each walked to Ready (about 1,100 events
// of history and 100 objects), ending with failures on the last one.
func historyScript() *synth.Script {
	sc := synth.New("database", t0)
	for i := 0; i < 100; i++ {
		sc.DatabaseLifecycle(fmt.Sprintf("lab/db-%03d", i))
	}
	sc.Failures("lab/db-099", 6, "external system unavailable")
	return sc
}

// BenchmarkView renders the whole dashboard with 1,000+ events of history
// and 100 objects (target: < 5 ms per frame).
func BenchmarkView(b *testing.B) {
	for _, size := range [][2]int{{120, 40}, {80, 24}, {200, 60}} {
		b.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(b *testing.B) {
			clock := clocktesting.NewFakePassiveClock(t0)
			m := newLiveModel(size[0], size[1], clock, newFakeControls())
			sc := historyScript()
			m = fold(m, sc.Events())
			clock.SetTime(sc.Now())
			if m.State().ObjectCount() != 100 || m.State().Totals().Events < 1000 {
				b.Fatalf("history too small: %d objects, %d events", m.State().ObjectCount(), m.State().Totals().Events)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_ = m.View()
			}
		})
	}
}

// BenchmarkViewColour is BenchmarkView with a 256-colour profile: the cost
// of escape sequences.
func BenchmarkViewColour(b *testing.B) {
	r := asciiRenderer()
	r.SetColorProfile(2) // termenv.ANSI256
	clock := clocktesting.NewFakePassiveClock(t0)
	m := New(Options{Header: Header{Lab: "4.4"}, Controls: newFakeControls(), Now: clock.Now, Renderer: r})
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40})
	sc := historyScript()
	m = fold(m, sc.Events())
	clock.SetTime(sc.Now())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = m.View()
	}
}

// BenchmarkEventFlood folds events into the model in the batches the
// listener delivers; events/s is how fast the UI absorbs a flood (the
// requirement is 10,000 events/s), live-heap-MB what it holds afterwards.
func BenchmarkEventFlood(b *testing.B) {
	sc := synth.New("database", t0)
	for len(sc.Events()) < 200000 {
		k := fmt.Sprintf("flood/db-%d", len(sc.Events())%500)
		sc.Add(k, sc.Watch("Database", k, "MODIFIED", 1))
		sc.Get(k)
		sc.Reconcile(k, synth.Failed("boom", 3, 20*time.Millisecond),
			synth.Client("get", "Database", k, observe.SourceCache, observe.OutcomeOK),
			synth.External(world.OpHealthCheck, observe.OutcomeError, time.Millisecond))
	}
	events := sc.Events()
	const batch = 256
	m := newLiveModel(120, 40, clocktesting.NewFakePassiveClock(t0), newFakeControls())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := (i * batch) % (len(events) - batch)
		m = fold(m, events[start:start+batch])
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(0, "ns/op")
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-heap-MB")
	_ = m.View()
}

// BenchmarkReplaySeek steps one event back in a 20,000-event trace, which
// refolds from the start.
func BenchmarkReplaySeek(b *testing.B) {
	sc := synth.New("database", t0)
	for i := 0; len(sc.Events()) < 20000; i++ {
		sc.DatabaseLifecycle(fmt.Sprintf("lab/db-%d", i))
	}
	trace := sc.Events()[:20000]
	m := newReplayModel(120, 40, trace)
	m, _ = press(m, "G")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.replay.seek(len(trace) - 1 - i%2)
	}
}

// BenchmarkViewWithLesson renders the dashboard with the lesson pane open
// (its section already rendered, in colour): the pane must not make a
// frame expensive.
func BenchmarkViewWithLesson(b *testing.B) {
	r := asciiRenderer()
	r.SetColorProfile(2) // termenv.ANSI256: the glamour "dark" style
	for _, size := range [][2]int{{120, 40}, {80, 24}} {
		b.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(b *testing.B) {
			clock := clocktesting.NewFakePassiveClock(t0)
			m := New(Options{Header: Header{Lab: "4.4"}, Controls: newFakeControls(), Now: clock.Now, Renderer: r, Lang: "en"})
			m = update(m, tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			sc := historyScript()
			m = fold(m, sc.Events())
			clock.SetTime(sc.Now())
			m, cmd := press(m, "L")
			m = update(m, cmd())
			if !strings.Contains(m.View(), "press w to see this") {
				b.Fatalf("lesson not shown:\n%s", m.View())
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_ = m.View()
			}
		})
	}
}

// BenchmarkLessonSectionRender is what opening a section costs in the
// background the first time (glamour, "dark" style, 118 columns).
func BenchmarkLessonSectionRender(b *testing.B) {
	m := New(Options{Header: Header{Lab: "4.4"}, Lang: "en", Renderer: asciiRenderer()})
	m.lesson.style = "dark"
	for i := 0; i < b.N; i++ {
		m.lesson.rendering = false
		if msg, ok := m.lesson.render(renderKey{section: i % 9, width: 117})().(lessonRenderedMsg); !ok || msg.err != nil {
			b.Fatal(msg.err)
		}
	}
}
