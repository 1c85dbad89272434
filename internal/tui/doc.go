// Package tui is lab's live terminal UI (bubbletea v1, bubbles, lipgloss): a
// start-up screen, then a dashboard of the running reference operator — the
// reconcile sequence across the Watch → Queue → Reconcile → Client → API
// lanes, the work queue from inside, each object on its state machine, the
// retry delays and who chose them, and the breaker, rate limiter and external
// system — with keys to flip the operator's pattern switches, change objects
// and step through reconciles one at a time. A lesson pane (L) shows the
// lab's lesson from package content beside the live operator, a section at
// a time; w runs the section's demo on the operator through the same
// controls. The same UI replays a recorded trace, event by event and
// reconcile by reconcile.
//
// The model consumes only observe.Event values (folded by package state)
// and drives the lab only through the Controls interface, so it is tested
// with synthetic events and a fake, and `lab start` / `lab replay` wire in
// the real operator.
//
// The root Model routes messages and draws the header and footer. The
// start-up screen, the lesson pane and the exercises layer are components
// with their own Update, View and SetSize; setSize gives each its size once
// per resize, so View only draws.
package tui
