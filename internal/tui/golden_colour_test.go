package tui

import (
	"io"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/muesli/termenv"
)

// colourRenderer renders with a fixed 256-colour profile on a dark
// background, so a golden holds the escape sequences a learner's terminal gets.
func colourRenderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI256)
	r.SetHasDarkBackground(true)
	return r
}

// TestGoldenDashboardColour120x40 is the dashboard of TestGoldenDashboard80x24
// at 120×40 in colour, beside the plain goldens: the styles every pane
// uses, as escape sequences (`cat` the file in a terminal to see it).
func TestGoldenDashboardColour120x40(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	m := New(Options{
		Header: Header{Lab: "4.4", Title: "Advanced patterns", KubernetesVersion: "v1.37.2",
			Address: "https://127.0.0.1:40123", Started: t0},
		Controls: newFakeControls(),
		Now:      clock.Now,
		Renderer: colourRenderer(),
	})
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40})
	sc := lifecycleScript()
	m = fold(m, sc.Events())
	clock.SetTime(sc.Now().Add(300 * time.Millisecond))
	view := m.View()
	if !strings.Contains(view, "\x1b[38;5;") {
		t.Fatal("the colour profile draws no 256-colour escape sequence")
	}
	golden.RequireEqual(t, view)
}
