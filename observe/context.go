package observe

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/controller"
)

// Scope says which reconcile call is running: events emitted during it carry
// these fields so a viewer can group them under that call.
type Scope struct {
	Controller  string
	Key         string
	ReconcileID string
}

type scopeKey struct{}

// WithScope returns a context carrying s. The Reconciler wrapper does this
// for every reconcile; code calling Emit below it needs nothing else.
func WithScope(ctx context.Context, s Scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, s)
}

// ScopeFrom returns the scope in ctx. Without one (a reconciler that is not
// wrapped), the ReconcileID controller-runtime puts into every reconcile's
// context is still used.
func ScopeFrom(ctx context.Context) Scope {
	s, _ := ctx.Value(scopeKey{}).(Scope)
	if s.ReconcileID == "" {
		s.ReconcileID = string(controller.ReconcileIDFromContext(ctx))
	}
	return s
}

// Emit sends e to em after filling Controller, Key and ReconcileID from the
// scope in ctx, where e leaves them empty. A nil em discards the event.
func Emit(ctx context.Context, em Emitter, e Event) {
	if em == nil {
		return
	}
	s := ScopeFrom(ctx)
	if e.Controller == "" {
		e.Controller = s.Controller
	}
	if e.Key == "" {
		e.Key = s.Key
	}
	if e.ReconcileID == "" {
		e.ReconcileID = s.ReconcileID
	}
	em.Emit(e)
}
