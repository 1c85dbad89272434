package tui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/operator-lab/lab/internal/tui/state"
	"github.com/operator-lab/lab/internal/tui/synth"
	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator/world"
)

// The panes, the reconcile detail and the demo captions in Russian: every
// word the learner reads follows the language (#16 item 8), the code's
// terms excepted.

// newLiveModelIn is newLiveModel in the language lang.
func newLiveModelIn(w, h int, clock *clocktesting.FakePassiveClock, lang string) Model {
	m := New(Options{
		Header: Header{Lab: "4.4", Title: "Advanced patterns", KubernetesVersion: "v1.37.2",
			Address: "https://127.0.0.1:40123", Started: t0},
		Controls: newFakeControls(),
		Now:      clock.Now,
		Renderer: asciiRenderer(),
		Lang:     lang,
	})
	return update(m, tea.WindowSizeMsg{Width: w, Height: h})
}

// patternsScript is the lifecycle script, then a third Database that the
// breaker and the rate limiter hold back while it waits out a delay: every
// pane has something to say.
func patternsScript() *synth.Script {
	sc := lifecycleScript()
	sc.Add("lab/db-3", sc.Watch("Database", "lab/db-3", "ADDED", 1))
	sc.Get("lab/db-3")
	sc.Reconcile("lab/db-3", synth.Failed("external system unavailable", 1, 5*time.Second),
		synth.Client("get", "Database", "db-3", observe.SourceCache, observe.OutcomeOK),
		synth.RateLimitCheck(3, 40*time.Millisecond),
		synth.External(world.OpHealthCheck, observe.OutcomeError, 20*time.Millisecond),
		synth.Breaker(state.BreakerClosed, state.BreakerOpen, 5, 6*time.Second),
		synth.BreakerRefused(state.BreakerOpen, 5, 5800*time.Millisecond))
	return sc
}

func russianDashboard(t *testing.T, w, h int) Model {
	t.Helper()
	clock := clocktesting.NewFakePassiveClock(t0)
	m := newLiveModelIn(w, h, clock, "ru")
	sc := patternsScript()
	m = fold(m, sc.Events())
	clock.SetTime(sc.Now().Add(300 * time.Millisecond))
	return update(m, tickMsg(clock.Now()))
}

func TestGoldenDashboardRussian120x40(t *testing.T) {
	golden.RequireEqual(t, russianDashboard(t, 120, 40).View())
}

func TestGoldenDashboardRussian80x24(t *testing.T) {
	golden.RequireEqual(t, russianDashboard(t, 80, 24).View())
}

func TestGoldenDetailRussian120x40(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	m := newLiveModelIn(120, 40, clock, "ru")
	sc := terminalScript()
	m = fold(m, sc.Events())
	clock.SetTime(sc.Now().Add(time.Second))
	golden.RequireEqual(t, enter(m).View())
}

// englishInPanes are phrases of the panes and the detail that Russian
// replaces; none may show in a Russian view.
var englishInPanes = []string{
	"Reconcile sequence", "Work queue", "Retry delays", "Objects & phases", "Circuit breaker", "Rate limiter",
	"External system", "from cache", "waited", "failures reset", "failure 1", "running", "waiting", "delayed",
	"reconcile(s)", "log scale", "conditions", "history", "last:", "calls waited", "call refused", "probe in",
	"rate limiter:", "Why it ran", "What it did", "What the work queue did", "returned",
	"a worker took", "in full", "esc returns", "not retried", "queue.Done: the worker",
}

// TestPanesSpeakRussian reads the dashboard's panes and the reconcile
// detail in Russian: the Russian words are there, and none of the
// English ones the panes used to keep.
func TestPanesSpeakRussian(t *testing.T) {
	m := russianDashboard(t, 120, 40)
	dash := m.View()
	detail := enter(m).View()
	clock := clocktesting.NewFakePassiveClock(t0)
	lifecycle := newLiveModelIn(120, 40, clock, "ru")
	sc := synth.New("database", t0.Add(time.Second))
	sc.DatabaseLifecycle("lab/db-1")
	lifecycle = fold(lifecycle, sc.Events())
	terminal := newLiveModelIn(120, 40, clock, "ru")
	terminal = enter(fold(terminal, terminalScript().Events()))
	for _, c := range []struct {
		name, view string
		want       []string
	}{
		{"dashboard", bodyOf(dash), []string{"Согласования по шагам", "Очередь", "Объекты и фазы", "Задержки повторов",
			"из кэша", "размыкатель closed → open (неудач 5)", "ограничитель: 3 вызова — ждать 40ms",
			"Размыкатель", "Ограничитель частоты", "Внешняя система", "неудача"}},
		{"detail", bodyOf(detail), []string{"Согласование #", "целиком", "Почему оно запустилось", "Что оно сделало",
			"Результат", "Что сделала очередь", "воркер взял ключ"}},
		{"sequence", bodyOf(lifecycle.View()), []string{"Forget (счётчик неудач сброшен)", "фаза Verifying → Ready", "условие Ready=True (Reconciled)"}},
		{"terminal detail", bodyOf(terminal.View()), []string{"ни requeue, ни Forget: терминальные ошибки не повторяются", "TerminalError: без повторов"}},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.view, w) {
				t.Errorf("the Russian %s lacks %q:\n%s", c.name, w, c.view)
			}
		}
		for _, en := range englishInPanes {
			if strings.Contains(c.view, en) {
				t.Errorf("the Russian %s still says %q:\n%s", c.name, en, c.view)
			}
		}
	}
}

// bodyOf is a view without its header and footer, which are the frame's
// (translated elsewhere): the panes and layers only.
func bodyOf(view string) string {
	lines := strings.Split(view, "\n")
	if len(lines) < 4 {
		return view
	}
	return strings.Join(lines[2:len(lines)-2], "\n")
}
