package cmd_test

import (
	"strings"
	"testing"
	"time"

	"github.com/operator-lab/lab/internal/l10n"
)

// TestStartSpeaksRussianInATerminal drives `lab start 3.1 --lang ru` in a
// 120×40 tmux terminal: the start-up screen, the header's badge, the panes,
// the footer, a status line and the ? overlay are all in Russian, from the
// one catalog the view renders with. C creates a HelloWorld the controller
// must reject, and its TerminalError shows.
func TestStartSpeaksRussianInATerminal(t *testing.T) {
	t.Parallel() // waits on its own control plane, like TestStartInATerminal
	ru := l10n.For("ru")
	s := startInTmux(t, 120, 40, "3.1 --lang ru")

	s.WaitFor(2*time.Minute, ru.Text("Starting your lab"))
	screen := s.WaitFor(3*time.Minute, ru.Text("● LIVE"), ru.Text("Work queue"), ru.Text("External system"),
		"? "+ru.Text("all keys"), "q "+ru.Text("quit"))
	for _, english := range []string{"● LIVE", "Work queue", "External system", "all keys", " quit", "events ·", "deep dive"} {
		if strings.Contains(screen, english) {
			t.Errorf("the Russian screen says %q:\n%s", english, screen)
		}
	}

	s.Keys("C")
	s.WaitFor(time.Minute, ru.Text(", with a spec the controller must reject"), "TerminalError")

	s.Keys("?")
	help := s.WaitFor(10*time.Second, ru.Text("all keys"), "c/C")
	if strings.Contains(help, "quit: ") || strings.Contains(help, "create: another object") {
		t.Errorf("the Russian help is English:\n%s", help)
	}
	// q quits from the help too (as it says). Closing it first with a
	// second ? would race: keys typed together reach the UI as one message.
	s.Keys("q")
	s.WaitFor(time.Minute, "LAB-EXIT=0")
}
