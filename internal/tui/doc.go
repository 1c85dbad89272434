// Package tui is lab's live terminal UI (bubbletea v1, bubbles, lipgloss): a
// start-up screen, then a dashboard of the running reference operator — the
// reconcile sequence across the Watch → Queue → Reconcile → Client → API
// lanes, the work queue from inside, each object on its state machine, the
// retry delays and who chose them, and the breaker, rate limiter and external
// system — with keys to flip the operator's pattern switches, change objects
// and step through reconciles one at a time. A lesson pane (L) shows the
// lab's lesson from package content beside the live operator, a section at
// a time; w runs the section's demo on the operator through the same
// controls, with the switches its lesson assumes, and puts the learner's
// switches back when it ends (w again stops it). The same UI replays a
// recorded trace, event by event and reconcile by reconcile.
//
// The model consumes only observe.Event values (folded by package state)
// and drives the lab only through the Controls interface, so it is tested
// with synthetic events and a fake, and `lab start` / `lab replay` wire in
// the real operator. Everything it shows, the step-through gate and the
// switches included, comes from the folded events, in live, replay and
// --mine mode alike; the controls are asked only which switches the lab
// has and, for a switch no event has reported yet, its value at start.
// What a lab lacks is not drawn: lab 3.1's controller reads no breaker,
// limiter or backoff switch and its objects have no phases, so its panes
// show none of them, and those switches' keys say which lab they belong to.
//
// The screen is made of components in the manner of soft-serve: the
// start-up screen, the dashboard (its panes: sequence, queue, objects,
// retry delays, patterns), the lesson, the exercises, the reconcile
// detail (enter: one reconcile in full, its error uncut), the help
// overlay, the replay and the live controls. Each has its own key map
// (shown through ShortHelp and FullHelp; the ? overlay lists every enabled
// binding, each under the one name the footer gives it) and its own
// Update, and those that draw a View and a SetSize; layouts are chosen in
// SetSize, once per resize, so View only draws. The root Model keeps one
// open layer (none, lesson, exercises, detail, help), routes messages by
// it, and draws only the header and the footer.
package tui
