package tui

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/operator-lab/lab/internal/tui/synth"
	"github.com/operator-lab/lab/observe"
)

// t0 is the fixed clock of every test.
var t0 = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

// fakeControls records what the UI asked of the lab, and keeps the events
// a real lab would emit for it (switch and gate events), for a test to
// fold with echo: the UI shows the switches and the gate from events.
type fakeControls struct {
	mu       sync.Mutex
	switches []Switch
	calls    []string
	created  int
	emitted  []observe.Event
}

func newFakeControls() *fakeControls {
	return &fakeControls{switches: []Switch{
		{Name: "requeue", Value: "error", Options: []string{"error", "requeue", "after", "terminal"}},
		{Name: "breaker", Value: "on", Options: []string{"on", "off"}},
		{Name: "ratelimit", Value: "on", Options: []string{"on", "off"}},
		{Name: "external", Value: "healthy", Options: []string{"healthy", "down", "flaky", "slow", "ratelimited"}},
		{Name: "backoff", Value: "controller", Options: []string{"controller", "lesson"}},
		{Name: "timescale", Value: "10", Options: []string{"1", "2", "5", "10", "20", "50", "100"}},
	}}
}

func (f *fakeControls) Switches() []Switch {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Switch(nil), f.switches...)
}

func (f *fakeControls) SetSwitch(name, value string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.switches {
		if f.switches[i].Name == name {
			f.switches[i].Value = value
			f.calls = append(f.calls, name+"="+value)
			f.emitted = append(f.emitted, observe.Event{Kind: observe.KindSwitch, Name: name, Value: value})
			return nil
		}
	}
	return fmt.Errorf("unknown switch %q", name)
}

func (f *fakeControls) value(name string) string {
	for _, s := range f.Switches() {
		if s.Name == name {
			return s.Value
		}
	}
	return ""
}

func (f *fakeControls) Pause()  { f.gate("pause", "paused") }
func (f *fakeControls) Resume() { f.gate("resume", "resumed") }
func (f *fakeControls) Step()   { f.gate("step", "step") }

func (f *fakeControls) gate(call, value string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	f.emitted = append(f.emitted, observe.Event{Kind: observe.KindGate, Value: value})
}

// echo folds the events the fake lab emitted since the last echo, as the
// real one's would arrive on the bus.
func echo(m Model, f *fakeControls) Model {
	f.mu.Lock()
	events := f.emitted
	f.emitted = nil
	f.mu.Unlock()
	return fold(m, events)
}

func (f *fakeControls) CreateObject(context.Context) (string, error) { return f.create("create") }

func (f *fakeControls) CreateInvalid(context.Context) (string, error) {
	return f.create("create-invalid")
}

// create records a create call and names the object: lab/db-2, lab/db-3, …
func (f *fakeControls) create(call string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.created++
	f.calls = append(f.calls, call)
	return fmt.Sprintf("lab/db-%d", f.created+1), nil
}

func (f *fakeControls) UpdateSpec(_ context.Context, key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "update "+key)
	return nil
}

func (f *fakeControls) Burst(_ context.Context, key string, n int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("burst %s %d", key, n))
	return nil
}

func (f *fakeControls) Delete(_ context.Context, key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "delete "+key)
	return nil
}

func (f *fakeControls) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// asciiRenderer renders without colour, so goldens are plain text.
func asciiRenderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	r.SetHasDarkBackground(true)
	return r
}

// newLiveModel builds a dashboard model for lab 4.4 with a fake lab behind it.
func newLiveModel(w, h int, clock *clocktesting.FakePassiveClock, controls Controls) Model {
	m := New(Options{
		Header: Header{Lab: "4.4", Title: "Advanced patterns", KubernetesVersion: "v1.37.2",
			Address: "https://127.0.0.1:40123", Started: t0},
		Controls: controls,
		Now:      clock.Now,
		Renderer: asciiRenderer(),
	})
	return update(m, tea.WindowSizeMsg{Width: w, Height: h})
}

// update applies one message and returns the new model.
func update(m Model, msg tea.Msg) Model {
	next, _ := m.Update(msg)
	return next.(Model)
}

// press sends a key.
func press(m Model, keys string) (Model, tea.Cmd) {
	var msg tea.KeyMsg
	switch keys {
	case "tab":
		msg = tea.KeyMsg{Type: tea.KeyTab}
	case "esc":
		msg = tea.KeyMsg{Type: tea.KeyEsc}
	case "left":
		msg = tea.KeyMsg{Type: tea.KeyLeft}
	case "right":
		msg = tea.KeyMsg{Type: tea.KeyRight}
	case "ctrl+c":
		msg = tea.KeyMsg{Type: tea.KeyCtrlC}
	case " ":
		msg = tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
	default:
		msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(keys)}
	}
	next, cmd := m.Update(msg)
	return next.(Model), cmd
}

// lifecycleScript is a Database created and walked to Ready, a second one
// failing against a down external system, and the switches reported.
func lifecycleScript() *synth.Script {
	sc := synth.New("database", t0.Add(2*time.Second))
	sc.DatabaseLifecycle("lab/db-1")
	sc.Add("lab/db-2", sc.Watch("Database", "lab/db-2", "ADDED", 1))
	sc.Failures("lab/db-2", 5, "external system unavailable")
	return sc
}

// fold applies events in one batch.
func fold(m Model, events []observe.Event) Model {
	return update(m, EventsMsg(events))
}

func mustFail(t *testing.T, cond bool, format string, args ...any) {
	t.Helper()
	if cond {
		t.Fatalf(format, args...)
	}
}

func keyMsg(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }
