package observe

import (
	"context"
	"fmt"

	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Watch event types, reported in a watch event's Type.
const (
	WatchAdded    = "ADDED"
	WatchModified = "MODIFIED"
	WatchDeleted  = "DELETED"
	// WatchGeneric is a generic event (from a channel source, not the API server).
	WatchGeneric = "GENERIC"
)

// Handler wraps an event handler so that every event it gets emits a watch
// event first, and every queue add the handler makes for it carries that
// watch event's seq as Cause. Use it in builder.Watches (or in place of For:
// Watches(&T{}, observe.Handler(em, name, "T", &handler.EnqueueRequestForObject{}))).
//
// objectKind names the watched kind; if empty it is worked out from the
// object. Cause links need em to be a SeqEmitter (a *Bus is) and the queue to
// come from NewQueue; without them watch events are still emitted.
func Handler(em Emitter, controller, objectKind string, h handler.EventHandler) handler.EventHandler {
	if em == nil {
		em = Discard
	}
	return &observedHandler{em: em, controller: controller, kind: objectKind, inner: h}
}

type observedHandler struct {
	em         Emitter
	controller string
	kind       string
	inner      handler.EventHandler
}

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

func (h *observedHandler) Create(ctx context.Context, e event.CreateEvent, q queue) {
	h.inner.Create(ctx, e, h.linked(q, h.emitWatch(WatchAdded, e.Object)))
}

func (h *observedHandler) Update(ctx context.Context, e event.UpdateEvent, q queue) {
	obj := e.ObjectNew
	if obj == nil {
		obj = e.ObjectOld
	}
	h.inner.Update(ctx, e, h.linked(q, h.emitWatch(WatchModified, obj)))
}

func (h *observedHandler) Delete(ctx context.Context, e event.DeleteEvent, q queue) {
	h.inner.Delete(ctx, e, h.linked(q, h.emitWatch(WatchDeleted, e.Object)))
}

func (h *observedHandler) Generic(ctx context.Context, e event.GenericEvent, q queue) {
	h.inner.Generic(ctx, e, h.linked(q, h.emitWatch(WatchGeneric, e.Object)))
}

// emitWatch reports the event and returns its seq (0 if unknown).
func (h *observedHandler) emitWatch(eventType string, obj client.Object) uint64 {
	if obj == nil {
		return 0
	}
	e := watchEvent(h.controller, h.kind, eventType, obj)
	if s, ok := h.em.(SeqEmitter); ok {
		return s.EmitSeq(e)
	}
	h.em.Emit(e)
	return 0
}

// linked hands the inner handler a queue whose adds point at the watch event.
// It must stay a PriorityQueue (it does: causeQueue embeds the observed
// queue), or handlers would stop giving initial-list events low priority.
func (h *observedHandler) linked(q queue, cause uint64) queue {
	if oq, ok := q.(*observedQueue); ok && cause != 0 {
		return causeQueue{observedQueue: oq, cause: cause}
	}
	return q
}

func watchEvent(controller, kind, eventType string, obj client.Object) Event {
	if kind == "" {
		kind = kindOf(nil, obj)
	}
	return Event{
		Kind: KindWatch, Controller: controller, Type: eventType, Object: kind,
		Key:             requestKey(client.ObjectKeyFromObject(obj)),
		ResourceVersion: obj.GetResourceVersion(), Generation: obj.GetGeneration(),
	}
}

// WatchInformers emits watch events for objs' kinds straight from the
// informers in c (normally mgr.GetCache()), for a controller whose event
// handlers cannot be wrapped (e.g. one built with For and Owns by someone
// else). These events have no cause links. The handlers are removed when ctx
// ends.
func WatchInformers(ctx context.Context, em Emitter, c cache.Informers, controller string, objs ...client.Object) error {
	if em == nil {
		em = Discard
	}
	for _, obj := range objs {
		kind := kindOf(nil, obj)
		informer, err := c.GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("get informer for %s: %w", kind, err)
		}
		emit := func(eventType string, o any) {
			if tombstone, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
				o = tombstone.Obj
			}
			if co, ok := o.(client.Object); ok {
				em.Emit(watchEvent(controller, kind, eventType, co))
			}
		}
		registration, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { emit(WatchAdded, o) },
			UpdateFunc: func(_, o any) { emit(WatchModified, o) },
			DeleteFunc: func(o any) { emit(WatchDeleted, o) },
		})
		if err != nil {
			return fmt.Errorf("watch %s informer: %w", kind, err)
		}
		go func() {
			<-ctx.Done()
			_ = informer.RemoveEventHandler(registration) // best effort: the cache may be stopping too
		}()
	}
	return nil
}
