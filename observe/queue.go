package observe

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// NewQueue returns a constructor for controller.Options.NewQueue that builds
// controller-runtime's priority queue (the default queue since v0.23) and
// emits a queue.* event for every call the controller and its event handlers
// make on it.
//
// The returned queue still implements priorityqueue.PriorityQueue: the
// controller type-asserts for it (and would otherwise wrap the queue, losing
// priorities), and handlers use AddWithOpts to give initial-list events
// handler.LowPriority.
func NewQueue(em Emitter) func(controllerName string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	if em == nil {
		em = Discard
	}
	return func(controllerName string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		if rl == nil {
			// The same default controller-runtime gives a priority queue.
			rl = workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, 1000*time.Second)
		}
		inner := priorityqueue.New(controllerName, func(o *priorityqueue.Opts[reconcile.Request]) {
			o.Log = logf.Log.WithName("priorityqueue").WithValues("controller", controllerName)
			o.RateLimiter = rl
		})
		return &observedQueue{
			PriorityQueue: inner,
			rateLimiter:   rl,
			em:            em,
			controller:    controllerName,
		}
	}
}

// observedQueue emits an event, then forwards the call. Events go out before
// the call so that, per item, queue.add always precedes the queue.get it makes
// possible and queue.done precedes the next queue.get.
type observedQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	rateLimiter workqueue.TypedRateLimiter[reconcile.Request]
	em          Emitter
	controller  string
	shutdown    sync.Once
}

var _ priorityqueue.PriorityQueue[reconcile.Request] = (*observedQueue)(nil)

// ShutDown stops the queue. Unlike the priority queue's own, it is safe to
// call twice (a test's cleanup and the controller both may).
func (q *observedQueue) ShutDown() {
	q.shutdown.Do(q.PriorityQueue.ShutDown)
}

// ShutDownWithDrain is ShutDown: the priority queue does not drain.
func (q *observedQueue) ShutDownWithDrain() {
	q.ShutDown()
}

func (q *observedQueue) Add(item reconcile.Request) {
	q.addWithOpts(priorityqueue.AddOpts{}, 0, item)
}

func (q *observedQueue) AddAfter(item reconcile.Request, after time.Duration) {
	q.addWithOpts(priorityqueue.AddOpts{After: after}, 0, item)
}

func (q *observedQueue) AddRateLimited(item reconcile.Request) {
	q.addWithOpts(priorityqueue.AddOpts{RateLimited: true}, 0, item)
}

func (q *observedQueue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	q.addWithOpts(o, 0, items...)
}

// addWithOpts records the add (with the watch event that caused it, if any)
// and forwards it.
//
// For rate-limited adds it asks the rate limiter itself and passes the
// resulting delay on as AddOpts.After. The priority queue would call When on
// its own goroutine some time after AddWithOpts returns, so this is the only
// way to report the delay actually used, and the effect on the queue is the
// same: it would also take the smaller of After and When.
func (q *observedQueue) addWithOpts(o priorityqueue.AddOpts, cause uint64, items ...reconcile.Request) {
	if q.ShuttingDown() || len(items) == 0 {
		return // the queue would drop these; do not report adds that never happen
	}
	if !o.RateLimited {
		kind, delay := KindQueueAdd, Duration(0)
		if o.After > 0 {
			kind, delay = KindQueueAddAfter, Duration(o.After)
		}
		for _, item := range items {
			q.em.Emit(Event{
				Kind: kind, Controller: q.controller, Key: requestKey(item.NamespacedName),
				Cause: cause, Delay: delay, Priority: copyPriority(o.Priority),
			})
		}
		q.PriorityQueue.AddWithOpts(o, items...)
		return
	}
	for _, item := range items {
		after := q.rateLimiter.When(item)
		if o.After > 0 && o.After < after {
			after = o.After
		}
		q.em.Emit(Event{
			Kind: KindQueueAddRateLimited, Controller: q.controller, Key: requestKey(item.NamespacedName),
			Cause: cause, Delay: Duration(after), Failures: q.rateLimiter.NumRequeues(item),
			Priority: copyPriority(o.Priority),
		})
		q.PriorityQueue.AddWithOpts(priorityqueue.AddOpts{After: after, Priority: o.Priority}, item)
	}
}

func (q *observedQueue) GetWithPriority() (reconcile.Request, int, bool) {
	item, priority, shutdown := q.PriorityQueue.GetWithPriority()
	if !shutdown {
		q.em.Emit(Event{
			Kind: KindQueueGet, Controller: q.controller, Key: requestKey(item.NamespacedName),
			Priority: &priority,
		})
	}
	return item, priority, shutdown
}

func (q *observedQueue) Get() (reconcile.Request, bool) {
	item, _, shutdown := q.GetWithPriority()
	return item, shutdown
}

func (q *observedQueue) Done(item reconcile.Request) {
	q.em.Emit(Event{Kind: KindQueueDone, Controller: q.controller, Key: requestKey(item.NamespacedName)})
	q.PriorityQueue.Done(item)
}

func (q *observedQueue) Forget(item reconcile.Request) {
	q.em.Emit(Event{Kind: KindQueueForget, Controller: q.controller, Key: requestKey(item.NamespacedName)})
	q.PriorityQueue.Forget(item)
}

// causeQueue is what a wrapped event handler sees: the observed queue, with
// every add it makes linked to one watch event.
type causeQueue struct {
	*observedQueue
	cause uint64
}

var _ priorityqueue.PriorityQueue[reconcile.Request] = causeQueue{}

func (q causeQueue) Add(item reconcile.Request) {
	q.addWithOpts(priorityqueue.AddOpts{}, q.cause, item)
}

func (q causeQueue) AddAfter(item reconcile.Request, after time.Duration) {
	q.addWithOpts(priorityqueue.AddOpts{After: after}, q.cause, item)
}

func (q causeQueue) AddRateLimited(item reconcile.Request) {
	q.addWithOpts(priorityqueue.AddOpts{RateLimited: true}, q.cause, item)
}

func (q causeQueue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	q.addWithOpts(o, q.cause, items...)
}

// requestKey formats a request as "namespace/name", or "name" for
// cluster-scoped objects (types.NamespacedName.String would give "/name").
func requestKey(n types.NamespacedName) string {
	if n.Namespace == "" {
		return n.Name
	}
	return n.Namespace + "/" + n.Name
}

// copyPriority keeps an event from sharing the caller's *int.
func copyPriority(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
