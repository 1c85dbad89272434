// Package learnerctl runs a learner's own controller for `lab start --mine`:
// the program mine.Build compiled from their workspace. It
// forwards the program's events onto lab's bus, so the live view shows them
// as it shows the reference operator's, and passes the view's step-through
// and switch commands to it (the line protocol of labs/runkit). The
// program is ready when its runner.ready event arrives; what it writes on
// stderr is the learner's own output, shown and kept for error messages.
package learnerctl

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/operator-lab/lab/internal/proc"
	"github.com/operator-lab/lab/observe"
)

// Options say what to run and where.
type Options struct {
	// Program is the built runner.
	Program string
	// Namespace is the only namespace the controller watches.
	Namespace string
	// Kubeconfig and Context select the cluster.
	Kubeconfig, Context string
	// Bus receives the program's events.
	Bus *observe.Bus
	// Output, if set, receives each line the learner's code prints,
	// prefixed "your controller: " (lab start --plain shows them).
	Output io.Writer
	// ReadyTimeout bounds the wait for the controller to run (default
	// DefaultReadyTimeout).
	ReadyTimeout time.Duration
}

// DefaultReadyTimeout is longer than the program's own wait for its
// watches, so its explanation arrives first.
const DefaultReadyTimeout = 90 * time.Second

// Process is a running controller program.
type Process struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	bus   *observe.Bus
	echo  io.Writer // where the learner's lines are shown as they come

	mu sync.Mutex
	// sw is the switch the ready event announced; value its current value.
	sw    observe.Switch
	value string
	// gate is the program's step-through gate, folded from its events.
	gate   observe.GateState
	output []string // the last lines the program printed

	ready     chan struct{}
	readyOnce sync.Once
	exited    chan struct{}
	err       error // why it exited; read after exited is closed
}

// keptLines bounds what is kept of the program's own output.
const keptLines = 30

// Start starts the program and returns once its controller runs. If the
// program exits first, the error carries what it printed.
func Start(ctx context.Context, opts Options) (*Process, error) {
	args := []string{"-namespace", opts.Namespace}
	if opts.Kubeconfig != "" {
		args = append(args, "-kubeconfig", opts.Kubeconfig)
	}
	if opts.Context != "" {
		args = append(args, "-context", opts.Context)
	}
	// Its own process group (a Ctrl-C meant for lab does not reach it),
	// and it dies with lab, with whatever it started, however lab dies.
	cmd := proc.Command(context.Background(), opts.Program, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("connect to your controller: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("connect to your controller: %w", err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("connect to your controller: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start your controller: %w", err)
	}
	p := newProcess(opts.Bus, opts.Output)
	p.cmd, p.stdin = cmd, stdin
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); p.forward(stdout) }()
	go func() { defer readers.Done(); p.readOutput(stderr) }()
	go func() {
		// Wait only after the pipes are drained, as os/exec requires.
		readers.Wait()
		err := cmd.Wait()
		p.mu.Lock()
		if err != nil {
			p.err = fmt.Errorf("your controller exited: %w%s", err, p.outputLocked())
		} else {
			p.err = errors.New("your controller exited" + p.outputLocked())
		}
		p.mu.Unlock()
		close(p.exited)
	}()

	timeout := opts.ReadyTimeout
	if timeout <= 0 {
		timeout = DefaultReadyTimeout
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-p.ready:
		return p, nil
	case <-p.exited:
		return nil, p.err
	case <-timer.C:
		p.kill()
		p.mu.Lock()
		defer p.mu.Unlock()
		return nil, fmt.Errorf("your controller did not start within %s%s", timeout, p.outputLocked())
	case <-ctx.Done():
		p.kill()
		return nil, context.Cause(ctx)
	}
}

func newProcess(bus *observe.Bus, echo io.Writer) *Process {
	return &Process{bus: bus, echo: echo, ready: make(chan struct{}), exited: make(chan struct{})}
}

// maxLine is the longest line kept of the program's output; the rest of a
// longer line is read and dropped, so the program never blocks on a full pipe.
const maxLine = 64 * 1024

// eachLine calls fn with every line r yields (without its newline, cut at
// maxLine) until r ends or fails.
func eachLine(r io.Reader, fn func(line []byte)) {
	br := bufio.NewReaderSize(r, maxLine)
	for {
		line, isPrefix, err := br.ReadLine()
		if len(line) > 0 || (err == nil && !isPrefix) {
			fn(line)
		}
		for isPrefix && err == nil {
			_, isPrefix, err = br.ReadLine() // the cut-off rest of a long line
		}
		if err != nil {
			return
		}
	}
}

// forward decodes the program's events onto lab's bus. The bus numbers
// events anew, so the program's watch events are remembered by their old
// number, and the queue adds they caused point at the new one. Each event
// is noted before it is re-emitted, so whoever sees it on lab's bus finds
// Switch, Paused and Waiting already saying what it says.
func (p *Process) forward(stdout io.Reader) {
	renumbered := map[uint64]uint64{}
	eachLine(stdout, func(line []byte) {
		if len(bytes.TrimSpace(line)) == 0 {
			return
		}
		e, err := observe.ParseLine(line)
		if err != nil {
			// The learner's code printed to the event stream after all.
			p.keepOutput(string(line))
			return
		}
		own := e.Seq
		if e.Cause != 0 {
			e.Cause = renumbered[e.Cause]
		}
		p.note(e)
		seq := p.bus.EmitSeq(e)
		if e.Kind == observe.KindWatch {
			renumbered[own] = seq
			forgetOld(renumbered, own)
		}
	})
}

// causeMemory is how many of the program's latest events a queue add may
// point back to; older numbers are forgotten, so memory stays bounded.
const causeMemory = 4096

func forgetOld(renumbered map[uint64]uint64, latest uint64) {
	if len(renumbered) <= causeMemory || latest < causeMemory {
		return
	}
	for own := range renumbered {
		if own < latest-causeMemory {
			delete(renumbered, own)
		}
	}
}

// note follows what the program reports of itself: that it is ready (with
// its switch), its switch's value and its step-through gate.
func (p *Process) note(e observe.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gate.Apply(e)
	switch e.Kind {
	case observe.KindRunnerReady:
		p.readyOnce.Do(func() {
			p.sw, p.value = e.RunnerReady()
			close(p.ready)
		})
	case observe.KindSwitch:
		if name, value := e.Switch(); name == p.sw.Name {
			p.value = value
		}
	}
}

// readOutput keeps what the program prints on stderr: the learner's own
// output (the program's events and readiness come on stdout).
func (p *Process) readOutput(stderr io.Reader) {
	eachLine(stderr, func(line []byte) { p.keepOutput(string(line)) })
}

func (p *Process) keepOutput(line string) {
	if p.echo != nil {
		fmt.Fprintf(p.echo, "your controller: %s\n", line)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.output = append(p.output, line)
	if len(p.output) > keptLines {
		p.output = p.output[len(p.output)-keptLines:]
	}
}

func (p *Process) outputLocked() string {
	if len(p.output) == 0 {
		return ""
	}
	return "; it printed:\n" + strings.Join(p.output, "\n")
}

// Output is the last lines the program printed.
func (p *Process) Output() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.output...)
}

// Switch returns the program's switch and its current value.
func (p *Process) Switch() (observe.Switch, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sw, p.value
}

// Set changes the switch.
func (p *Process) Set(name, value string) error {
	sw, _ := p.Switch()
	if name != sw.Name || !slices.Contains(sw.Values, value) {
		return fmt.Errorf("your controller's world has no setting %s=%s (it has %s=%s)", name, value, sw.Name, strings.Join(sw.Values, "|"))
	}
	if err := p.send("set " + name + "=" + value); err != nil {
		return err
	}
	// Taken at once rather than when the program's switch event arrives:
	// the live view cycles a switch from the value it read last, so a
	// second key press right after the first must see this one.
	p.mu.Lock()
	p.value = value
	p.mu.Unlock()
	return nil
}

// Pause, Resume and Step drive the program's step-through gate. What the
// gate does is known from its events alone (Paused, Waiting): they arrive
// within a pipe's round trip, and the live view folds the same events.
// Sending fails only once the program has exited, which Exited reports.
func (p *Process) Pause() { _ = p.send("pause") }

// Resume lets every held reconcile run.
func (p *Process) Resume() { _ = p.send("resume") }

// Step lets one held reconcile run.
func (p *Process) Step() { _ = p.send("step") }

// Gate is the program's step-through gate as its events describe it.
func (p *Process) Gate() observe.GateState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gate
}

// Paused says whether the gate holds reconciles.
func (p *Process) Paused() bool { return p.Gate().Paused }

// Waiting is how many reconciles are held at the gate.
func (p *Process) Waiting() int { return p.Gate().Waiting }

func (p *Process) send(command string) error {
	select {
	case <-p.exited:
		return p.err
	default:
	}
	if _, err := io.WriteString(p.stdin, command+"\n"); err != nil {
		return fmt.Errorf("tell your controller %q: %w", command, err)
	}
	return nil
}

// PID is the process id of the program's supervisor (see package proc),
// which the program dies with.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited is closed when the program has ended; Err then says why.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Err says why the program ended (nil while it runs).
func (p *Process) Err() error {
	select {
	case <-p.exited:
		return p.err
	default:
		return nil
	}
}

// stopGrace is how long the program gets to stop its manager after its
// input closes, before it is killed.
var stopGrace = 10 * time.Second

// kill ends the program, and everything it started, at once and waits for it.
func (p *Process) kill() {
	_ = p.stdin.Close()
	_ = proc.Kill(p.cmd)
	<-p.exited
}

// Stop ends the program: closing its input asks it to stop; past stopGrace
// it is killed with everything it started (and Stop says so), so nothing
// it started keeps the pipes open either.
func (p *Process) Stop() error {
	_ = p.stdin.Close()
	select {
	case <-p.exited:
		return nil
	case <-time.After(stopGrace):
	}
	p.kill()
	return fmt.Errorf("your controller did not stop within %s of being asked; killed it", stopGrace)
}
