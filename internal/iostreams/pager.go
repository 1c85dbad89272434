package iostreams

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// pagerProcess is a running pager and the pipe into it.
type pagerProcess struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     io.Writer // what Out was before
	command string
	ctx     context.Context
}

// StartPager sends what is written to Out from now on through the pager
// ($PAGER, else less -R with LESS=FRX when LESS is unset), when Out is a
// terminal and a pager is set; StopPager waits until the reader quits it.
// If the pager cannot start, Out stays as it was and the error says why:
// the output can still go straight to the terminal. When ctx ends, the
// pager is asked to quit.
func (s *IOStreams) StartPager(ctx context.Context) error {
	args := strings.Fields(s.pagerCommand)
	if len(args) == 0 || !s.stdoutTTY || s.pager != nil {
		return nil
	}
	// Not through proc: the pager must stay in the terminal's foreground
	// process group to read keys. A Ctrl-C reaches it as well as lab, and
	// lab then asks it to quit with SIGTERM, on which less restores the
	// terminal (SIGKILL would leave it in the pager's mode).
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.Env = append(os.Environ(), s.pagerEnv...)
	cmd.Stdout, cmd.Stderr = s.Out, s.ErrOut
	in, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("pager %q: %w", s.pagerCommand, err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the pager %q: %w", s.pagerCommand, err)
	}
	s.pager = &pagerProcess{cmd: cmd, in: in, out: s.Out, command: s.pagerCommand, ctx: ctx}
	s.Out = pagerWriter{in}
	return nil
}

// StopPager ends the output to the pager, waits for the reader to quit it
// and puts Out back. A pager stopped because StartPager's context ended is
// no error.
func (s *IOStreams) StopPager() error {
	p := s.pager
	if p == nil {
		return nil
	}
	s.pager, s.Out = nil, p.out
	_ = p.in.Close()
	if err := p.cmd.Wait(); err != nil && p.ctx.Err() == nil {
		return fmt.Errorf("pager %q: %w", p.command, err)
	}
	return nil
}

// pagerWriter is the pipe into the pager. A reader who quits the pager
// before the end closes the pipe: what is left to write is dropped, which
// is no error of the command writing it.
type pagerWriter struct{ w io.Writer }

func (p pagerWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
		return len(b), nil
	}
	return n, err
}
