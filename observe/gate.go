package observe

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// GateAction is what a gate event reports the gate did (Event.GateAction).
type GateAction string

// Gate actions; the values are part of the JSON Lines format.
const (
	GatePaused  GateAction = "paused"
	GateResumed GateAction = "resumed"
	// GateStep: one reconcile (Key) was let through by Step.
	GateStep GateAction = "step"
	// GateWaiting: a worker is holding a reconcile (Key) at the paused gate.
	GateWaiting GateAction = "waiting"
)

// Gate lets a person step through reconciles one at a time. While it is
// paused, every worker of a wrapped reconciler waits at the gate before
// calling the inner reconciler; Step lets exactly one through, Resume lets
// all through. Workers are released in the order they arrived.
//
// The queue keeps working while the gate is paused: adds, merges and rate
// limiting all stay visible, which is the point of pausing.
type Gate struct {
	mu      sync.Mutex
	paused  bool
	steps   int // Step calls made while no worker was waiting, used by the next arrivals
	waiters []*gateWaiter
	em      Emitter
}

type gateWaiter struct {
	release chan struct{}
	scope   Scope
	em      Emitter
}

// NewGate returns an open (not paused) gate. Its pause and resume events go
// to the emitter of the first Reconciler it is given to.
func NewGate() *Gate {
	return &Gate{}
}

func (g *Gate) attach(em Emitter) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.em == nil {
		g.em = em
	}
}

func (g *Gate) emitLocked(e Event) {
	if g.em != nil {
		g.em.Emit(e)
	}
}

// Pause makes workers wait at the gate from their next reconcile on.
func (g *Gate) Pause() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.paused {
		return
	}
	g.paused = true
	g.steps = 0
	g.emitLocked(GateEvent(GatePaused, Scope{}))
}

// Resume opens the gate and releases every waiting worker.
func (g *Gate) Resume() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.paused {
		return
	}
	g.paused = false
	g.steps = 0
	g.emitLocked(GateEvent(GateResumed, Scope{}))
	for _, w := range g.waiters {
		close(w.release)
	}
	g.waiters = nil
}

// Step lets exactly one reconcile through a paused gate: the longest-waiting
// one, or, if no worker is waiting yet, the next to arrive (so a step is
// never lost to a race with a worker that is about to wait). It does nothing
// on an open gate.
func (g *Gate) Step() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.paused {
		return
	}
	if len(g.waiters) == 0 {
		g.steps++
		return
	}
	w := g.waiters[0]
	g.waiters = g.waiters[1:]
	// Emit before releasing, so the step precedes the reconcile.start it allows.
	w.em.Emit(GateEvent(GateStep, w.scope))
	close(w.release)
}

// Paused reports whether the gate is holding workers.
func (g *Gate) Paused() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.paused
}

// Waiting is how many workers are waiting at the gate now.
func (g *Gate) Waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.waiters)
}

// wait returns when the gate lets this reconcile through, or with an error
// when ctx ends first.
func (g *Gate) wait(ctx context.Context, em Emitter, scope Scope) error {
	g.mu.Lock()
	if !g.paused {
		g.mu.Unlock()
		return nil
	}
	if g.steps > 0 {
		g.steps--
		em.Emit(GateEvent(GateStep, scope))
		g.mu.Unlock()
		return nil
	}
	w := &gateWaiter{release: make(chan struct{}), scope: scope, em: em}
	g.waiters = append(g.waiters, w)
	em.Emit(GateEvent(GateWaiting, scope))
	g.mu.Unlock()

	select {
	case <-w.release:
		return nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, other := range g.waiters {
		if other == w {
			g.waiters = append(g.waiters[:i:i], g.waiters[i+1:]...)
			return fmt.Errorf("waiting at the step-through gate: %w", context.Cause(ctx))
		}
	}
	// Released at the same moment ctx ended: the step was spent on this
	// reconcile, so run it (it will see the cancelled context).
	return nil
}

// GateState is a Gate as its events describe it: the one fold of gate
// events, for every reader that knows the gate only from them (the live
// view, lab's side of a learner's controller under --mine). The zero value
// is an open gate nobody has reported on yet.
//
// A reconcile that leaves the gate because its context ended (the
// controller stopping) emits nothing, so Waiting still counts it until the
// next resume.
type GateState struct {
	// Seen is set once any gate event arrived.
	Seen   bool
	Paused bool
	// Waiting is how many reconciles are held at the gate.
	Waiting int
	// Steps counts the reconciles let through one at a time.
	Steps int
	// Since is when the gate last paused or resumed.
	Since time.Time
}

// Apply folds e into the state; events of other kinds change nothing.
func (g *GateState) Apply(e Event) {
	action := e.GateAction()
	if action == "" {
		return
	}
	g.Seen = true
	switch action {
	case GatePaused:
		g.Paused, g.Since = true, e.Time
	case GateResumed:
		g.Paused, g.Waiting, g.Since = false, 0, e.Time
	case GateWaiting:
		g.Waiting++
	case GateStep:
		g.Steps++
		// A step either releases a held reconcile or is spent by the next
		// to arrive, which never waited. The gate keeps steps for arrivals
		// only while none is held, so with Waiting > 0 this one released one.
		if g.Waiting > 0 {
			g.Waiting--
		}
	}
}
