package tui

import (
	"context"
	"time"

	"github.com/operator-lab/lab/observe"
)

// Switch is one pattern switch of the running operator.
type Switch struct {
	Name  string
	Value string
	// Options are the values the switch takes, in the order its key cycles
	// through them (for timescale: slowest to fastest).
	Options []string
}

// Controls is what the UI drives on a running lab: the operator's pattern
// switches, its step-through gate, and changes to the lab's objects. The
// UI calls the switch and gate methods from its update loop, so they must
// return at once; the object methods run in the background. What the UI
// shows of the gate and the switches comes from their events, not from
// here.
type Controls interface {
	OperatorControls

	// CreateObject creates one more sample object and returns its key.
	CreateObject(ctx context.Context) (key string, err error)
	// CreateInvalid creates a sample object whose spec the operator
	// rejects for good (a TerminalError), for the permanent-error demo.
	CreateInvalid(ctx context.Context) (key string, err error)
	// UpdateSpec changes the object's spec once (a new generation).
	UpdateSpec(ctx context.Context, key string) error
	// Burst changes the object's spec n times in quick succession.
	Burst(ctx context.Context, key string, n int) error
	// Delete deletes the object.
	Delete(ctx context.Context, key string) error
}

// OperatorControls is the part of Controls that acts on the running
// controller (the reference operator or the learner's own).
type OperatorControls interface {
	// Switches returns every switch with its current value and options:
	// which switches the lab has, and what their keys move through.
	Switches() []Switch
	// SetSwitch changes a switch on the running operator.
	SetSwitch(name, value string) error

	// Pause makes workers wait before each reconcile; Step lets exactly
	// one waiting reconcile through; Resume lets them all run. Whether the
	// gate is paused, and how many it holds, the gate's events say.
	Pause()
	Resume()
	Step()
}

// Header is what the header line says about the lab and its control plane.
type Header struct {
	Lab   string // "4.4"
	Title string // "Advanced patterns"
	// KubernetesVersion and Address describe the control plane.
	KubernetesVersion string
	Address           string
	// Started is when the control plane came up (for the uptime).
	Started time.Time
	// Source names a replayed trace file.
	Source string
	// Namespace is the lab session's namespace; keys in it are shown by
	// name alone.
	Namespace string
	// Operator, when set, is shown as is (e.g. "your controller: results"),
	// so the learner sees whose controller is running; the reference
	// operator leaves it empty.
	Operator string
}

// EventsMsg carries a batch of events into the model.
type EventsMsg []observe.Event

// StepDoneMsg reports a start-up step finished (Err nil) or failed.
type StepDoneMsg struct {
	Step string
	Took time.Duration
	// Detail is shown beside the step (a path, an address).
	Detail string
	Err    error
}

// StepStartedMsg reports a start-up step began, for steps not planned up front.
type StepStartedMsg struct{ Step string }

// StepDetailMsg updates what a running step says about itself (for example
// the progress of a long binary build).
type StepDetailMsg struct{ Step, Detail string }

// NoticeMsg shows a line on the status line, for news from outside the
// event stream (the learner's controller exited, say).
type NoticeMsg struct {
	Text string
	Bad  bool
}

// ControlPlaneMsg says the control plane stopped answering (Lost, with
// Why) or answers again: the header says LIVE only while it answers.
type ControlPlaneMsg struct {
	Lost bool
	Why  string
}

// StartFailedMsg marks the running start-up step as failed with Err.
type StartFailedMsg struct{ Err error }

// ReadyMsg ends the start-up screen: the lab is running and its events flow.
type ReadyMsg struct {
	Header   Header
	Controls Controls
	Events   <-chan observe.Event
	// Dropped reports events the bus dropped for this subscriber (optional).
	Dropped func() uint64
}

// eventsClosedMsg says the event channel was closed (the operator stopped).
type eventsClosedMsg struct{}

// tickMsg refreshes countdowns, the uptime and the spinner.
type tickMsg time.Time

// actionDoneMsg reports the result of a background object action.
type actionDoneMsg struct {
	what string
	key  string
	err  error
}

// Event batching: a flood of events becomes one update per batchWindow
// (bounded by batchMax events) rather than one per event, so rendering never
// falls behind the stream.
const (
	batchWindow = 30 * time.Millisecond
	batchMax    = 4096
	tickEvery   = 250 * time.Millisecond
)
