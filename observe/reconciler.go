package observe

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Reconciler wraps r so that every call emits reconcile.start and
// reconcile.end, and runs with a Scope in its context (so client, phase,
// condition and other events emitted below it carry the controller, key and
// reconcile ID). If gate is not nil, each call first waits at the gate while
// it is paused.
func Reconciler(em Emitter, controllerName string, gate *Gate, r reconcile.Reconciler) reconcile.Reconciler {
	if em == nil {
		em = Discard
	}
	if gate != nil {
		gate.attach(em)
	}
	return &observedReconciler{em: em, controller: controllerName, gate: gate, inner: r}
}

type observedReconciler struct {
	em         Emitter
	controller string
	gate       *Gate
	inner      reconcile.Reconciler
}

func (o *observedReconciler) Reconcile(ctx context.Context, req reconcile.Request) (result reconcile.Result, err error) {
	scope := Scope{
		Controller:  o.controller,
		Key:         requestKey(req.NamespacedName),
		ReconcileID: string(controller.ReconcileIDFromContext(ctx)),
	}
	if scope.ReconcileID == "" { // called outside a controller, e.g. from a test
		scope.ReconcileID = string(uuid.NewUUID())
	}
	if o.gate != nil {
		if err := o.gate.wait(ctx, o.em, scope); err != nil {
			return reconcile.Result{}, err
		}
	}
	ctx = WithScope(ctx, scope)

	start := time.Now()
	Emit(ctx, o.em, Event{Kind: KindReconcileStart})
	finished := false
	defer func() {
		if finished {
			return
		}
		// The inner reconciler panicked. controller-runtime recovers the panic
		// and treats it as an error; report it that way before passing it on
		// (recover returns nil only for runtime.Goexit, e.g. t.FailNow in a
		// test reconciler; that must keep unwinding as it is.)
		p := recover()
		msg := "reconciler exited (runtime.Goexit)"
		if p != nil {
			msg = fmt.Sprintf("panic: %v", p)
		}
		Emit(ctx, o.em, Event{Kind: KindReconcileEnd, Result: ResultError, Error: msg, DurationMs: millisSince(start)})
		if p != nil {
			panic(p)
		}
	}()
	result, err = o.inner.Reconcile(ctx, req)
	finished = true
	Emit(ctx, o.em, endEvent(result, err, millisSince(start)))
	return result, err
}

// endEvent describes a finished reconcile the way the controller will treat
// it: an error wins over RequeueAfter and Requeue (both are then ignored, but
// RequeueAfter is still reported as returned).
func endEvent(result reconcile.Result, err error, durationMs float64) Event {
	e := Event{Kind: KindReconcileEnd, RequeueAfter: Duration(result.RequeueAfter), DurationMs: durationMs}
	switch {
	case err != nil && errors.Is(err, reconcile.TerminalError(nil)):
		e.Result, e.Error = ResultTerminal, err.Error()
	case err != nil:
		e.Result, e.Error = ResultError, err.Error()
	case result.RequeueAfter > 0:
		e.Result = ResultRequeueAfter
	case result.Requeue: //nolint:staticcheck // deprecated, but learners use it and the controller still honours it
		e.Result = ResultRequeue
	default:
		e.Result = ResultSuccess
	}
	return e
}

func millisSince(start time.Time) float64 {
	return float64(time.Since(start).Microseconds()) / 1000
}
