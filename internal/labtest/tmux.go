package labtest

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Tmux drives a real terminal: the lab binary in a detached tmux
// session of a fixed size, read back with capture-pane.
type Tmux struct {
	t    testing.TB
	name string
}

// NewTmux runs command in a new detached terminal of width×height, closed
// when the test ends.
func NewTmux(t testing.TB, width, height int, command string) *Tmux {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is not installed: `make test` installs it (or: apt-get install -y tmux)")
	}
	s := &Tmux{t: t, name: fmt.Sprintf("labtest-%d-%d", os.Getpid(), time.Now().UnixNano())}
	args := []string{"new-session", "-d", "-s", s.name, "-x", strconv.Itoa(width), "-y", strconv.Itoa(height), command}
	// Closing the last session stops the tmux server; a session started
	// while it shuts down fails with "server exited unexpectedly".
	for try := 0; ; try++ {
		out, err := exec.Command("tmux", args...).CombinedOutput()
		if err == nil {
			break
		}
		if try == 20 || !strings.Contains(string(out), "server exited unexpectedly") {
			t.Fatalf("tmux new-session: %v\n%s", err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Cleanup(s.Kill)
	return s
}

// Kill closes the terminal, as closing a terminal window does (its
// processes get SIGHUP).
func (s *Tmux) Kill() { _ = exec.Command("tmux", "kill-session", "-t", s.name).Run() }

func (s *Tmux) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", args...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Screen is what the terminal shows now.
func (s *Tmux) Screen() string { return s.run("capture-pane", "-p", "-t", s.name) }

// Keys types keys, as tmux send-keys names them.
func (s *Tmux) Keys(keys ...string) {
	s.run(append([]string{"send-keys", "-t", s.name}, keys...)...)
}

// WaitFor polls the screen until every want is on it.
func (s *Tmux) WaitFor(timeout time.Duration, want ...string) string {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		screen := s.Screen()
		missing := ""
		for _, w := range want {
			if !strings.Contains(screen, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return screen
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("after %s the screen still lacks %q:\n%s", timeout, missing, screen)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// WaitForMatch polls the screen until re matches it.
func (s *Tmux) WaitForMatch(timeout time.Duration, re *regexp.Regexp) string {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		screen := s.Screen()
		if re.MatchString(screen) {
			return screen
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("after %s the screen still does not match %s:\n%s", timeout, re, screen)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// PanePID is the PID of the shell the terminal runs.
func (s *Tmux) PanePID() int {
	pid, err := strconv.Atoi(strings.TrimSpace(s.run("display-message", "-p", "-t", s.name, "#{pane_pid}")))
	if err != nil {
		s.t.Fatal(err)
	}
	return pid
}
