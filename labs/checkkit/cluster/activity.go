package cluster

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// Activity tells how long code under check has done nothing a check can
// see: no call to the API server in flight through the client Track gave
// it, and none ended, nor anything the check itself marked with Touch.
// Code that is still running after such a quiet is waiting (sleeping, or
// blocked on a limiter or a channel), not working.
type Activity struct {
	mu       sync.Mutex
	inFlight int
	last     time.Time
}

// Track returns c, counted by a: every call through it is activity.
func Track(c client.Client) (client.Client, *Activity) {
	a := &Activity{last: time.Now()}
	call := func(err error) error { a.end(); return err }
	return interceptor.NewClient(withWatch(c), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			a.begin()
			return call(c.Get(ctx, key, obj, opts...))
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			a.begin()
			return call(c.List(ctx, list, opts...))
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			a.begin()
			return call(c.Create(ctx, obj, opts...))
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			a.begin()
			return call(c.Update(ctx, obj, opts...))
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			a.begin()
			return call(c.Patch(ctx, obj, patch, opts...))
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			a.begin()
			return call(c.Apply(ctx, obj, opts...))
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			a.begin()
			return call(c.Delete(ctx, obj, opts...))
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			a.begin()
			return call(c.SubResource(sub).Update(ctx, obj, opts...))
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			a.begin()
			return call(c.SubResource(sub).Patch(ctx, obj, patch, opts...))
		},
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, ac runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			a.begin()
			return call(c.SubResource(sub).Apply(ctx, ac, opts...))
		},
	}), a
}

func (a *Activity) begin() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.inFlight++
	a.last = time.Now()
}

func (a *Activity) end() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.inFlight--
	a.last = time.Now()
}

// Touch marks something the check saw happen (a Reconcile returned).
func (a *Activity) Touch() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.last = time.Now()
}

// Quiet is how long nothing has happened: 0 while a call is in flight.
func (a *Activity) Quiet() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.inFlight > 0 {
		return 0
	}
	return time.Since(a.last)
}

// WaitOrStall waits for done until the code under check has been quiet for
// stallAfter, and reports whether done came first.
func (a *Activity) WaitOrStall(done <-chan struct{}, stallAfter time.Duration) bool {
	tick := time.NewTicker(stallAfter / 20)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return true
		case <-tick.C:
			if a.Quiet() >= stallAfter {
				select {
				case <-done: // it ended in the same moment
					return true
				default:
					return false
				}
			}
		}
	}
}
