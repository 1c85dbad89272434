package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/operator-lab/lab/observe"
)

// outageError is what FakeSystem returns while it is down; it wraps the
// sentinel the lab gives learners (external.ErrUnavailable).
type outageError struct{ sentinel error }

func (e outageError) Error() string { return "external system unavailable (simulated outage)" }
func (e outageError) Unwrap() error { return e.sentinel }

// The operations of FakeSystem, as Call.Step names them: the reference
// operator's external operations (operator/world's Op* names).
const (
	StepHealthCheck = "healthcheck"
	StepProvision   = "provision"
	StepPing        = "ping"
	StepDeprovision = "deprovision"
)

// FakeSystem is a simulated external database service with the method set
// of lab 4.4's external.System (HealthCheck, Provision, Ping, Deprovision:
// the reference operator's operations). Checks make it fail on purpose: an operation for
// one Database a number of times, or everything during an outage.
type FakeSystem struct {
	mu sync.Mutex
	// Unavailable is the error an outage wraps (external.ErrUnavailable).
	Unavailable error
	down        bool
	failures    map[string]int // "name/step" → failures left
	calls       []Call
	instances   map[string]int    // Database name → successful Provision calls
	dropped     map[string]int    // Database name → successful Deprovision calls
	endpoints   map[string]string // endpoint → Database name
	running     []observe.Scope   // the reconciles running under Attribute
}

// Call is one call the fake received: Step is a Step* name, Name the
// Database's name ("" for a health check, which names none). Reconcile is
// the ID of the reconcile that made the call (observe's ReconcileID) and
// Key the object it reconciled ("namespace/name"), both "" when not known:
// see Attribute.
type Call struct {
	Step, Name     string
	Err            error
	At             time.Time
	Reconcile, Key string
}

// NewFakeSystem returns a healthy fake whose failures wrap unavailable.
func NewFakeSystem(unavailable error) *FakeSystem {
	return &FakeSystem{Unavailable: unavailable, failures: map[string]int{}, instances: map[string]int{}, dropped: map[string]int{}, endpoints: map[string]string{}}
}

// SetDown starts or ends an outage: every call fails while it lasts.
func (f *FakeSystem) SetDown(down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = down
}

// FailStep makes step (StepProvision, StepPing, StepDeprovision) for the
// Database name, or StepHealthCheck with name "", fail the next times calls.
func (f *FakeSystem) FailStep(name, step string, times int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures[name+"/"+step] = times
}

// Calls returns the calls made so far, in order.
func (f *FakeSystem) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Call(nil), f.calls...)
}

// CallsIn returns the calls made by the reconcile with the given ID, in
// order: a reconcile's health check is told from another's this way, as
// it names no Database.
func (f *FakeSystem) CallsIn(reconcileID string) []Call {
	var out []Call
	for _, c := range f.Calls() {
		if reconcileID != "" && c.Reconcile == reconcileID {
			out = append(out, c)
		}
	}
	return out
}

// Attribute wraps r, a reconciler that calls f, so that every call f
// receives while one reconcile of r runs is stamped with that reconcile's
// ID and key (Call.Reconcile, Call.Key), whatever context the code under
// check passed along. Wrap it inside observe.Reconciler, whose IDs the
// events carry. A call that comes while no reconcile, or several at once,
// run is stamped with what its own context carries (observe.ScopeFrom).
func (f *FakeSystem) Attribute(r reconcile.Reconciler) reconcile.Reconciler {
	return attributed{f, r}
}

type attributed struct {
	f *FakeSystem
	r reconcile.Reconciler
}

func (a attributed) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	s := observe.ScopeFrom(ctx)
	if s.Key == "" {
		s.Key = req.String()
	}
	a.f.mu.Lock()
	a.f.running = append(a.f.running, s)
	a.f.mu.Unlock()
	defer func() {
		a.f.mu.Lock()
		defer a.f.mu.Unlock()
		if i := slices.Index(a.f.running, s); i >= 0 {
			a.f.running = slices.Delete(a.f.running, i, i+1)
		}
	}()
	return a.r.Reconcile(ctx, req)
}

// stamp fills in which reconcile makes call c with ctx. The caller holds mu.
func (f *FakeSystem) stamp(ctx context.Context, c Call) Call {
	s := observe.ScopeFrom(ctx)
	if len(f.running) == 1 {
		// One reconcile runs: the call is its, even if the context it was
		// given is not (context.Background(), say).
		s = f.running[0]
	}
	c.Reconcile, c.Key = s.ReconcileID, s.Key
	return c
}

// CallsFor returns the calls made for one Database.
func (f *FakeSystem) CallsFor(name string) []Call {
	var out []Call
	for _, c := range f.Calls() {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

// Provisioned returns how many times the Database name was provisioned.
func (f *FakeSystem) Provisioned(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.instances[name]
}

func (f *FakeSystem) call(ctx context.Context, step, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var err error
	switch {
	case f.down:
		err = outageError{f.Unavailable}
	case f.failures[name+"/"+step] > 0:
		f.failures[name+"/"+step]--
		err = fmt.Errorf("external %s %s: %w", step, name, outageError{f.Unavailable})
	}
	f.calls = append(f.calls, f.stamp(ctx, Call{Step: step, Name: name, Err: err, At: time.Now()}))
	return err
}

// HealthCheck fails during an outage.
func (f *FakeSystem) HealthCheck(ctx context.Context) error { return f.call(ctx, StepHealthCheck, "") }

// Provision creates the database for key (namespace/name) and returns its
// endpoint, the same one every time.
func (f *FakeSystem) Provision(ctx context.Context, key, databaseName string) (string, error) {
	name := key[strings.LastIndex(key, "/")+1:]
	if err := f.call(ctx, StepProvision, name); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.instances[name]++
	endpoint := databaseName + "." + name + ".db.example:5432"
	f.endpoints[endpoint] = name
	return endpoint, nil
}

// Deprovision drops the database for key (namespace/name); dropping one
// that is not there succeeds.
func (f *FakeSystem) Deprovision(ctx context.Context, key string) error {
	name := key[strings.LastIndex(key, "/")+1:]
	if err := f.call(ctx, StepDeprovision, name); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dropped[name]++
	return nil
}

// Deprovisioned returns how many Deprovision calls for the Database name succeeded.
func (f *FakeSystem) Deprovisioned(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dropped[name]
}

// Ping checks the database at endpoint; an endpoint Provision never
// returned fails.
func (f *FakeSystem) Ping(ctx context.Context, endpoint string) error {
	f.mu.Lock()
	name, ok := f.endpoints[endpoint]
	f.mu.Unlock()
	if !ok {
		err := fmt.Errorf("external ping: no database at endpoint %q", endpoint)
		f.mu.Lock()
		f.calls = append(f.calls, f.stamp(ctx, Call{Step: StepPing, Err: err, At: time.Now()}))
		f.mu.Unlock()
		return err
	}
	return f.call(ctx, StepPing, name)
}

// StatusWrites wraps c so that every successful status write (update,
// patch or server-side apply of the status subresource) is passed to record
// with the object as written (for an apply, as stored after it).
func StatusWrites(c client.Client, record func(client.Object)) client.Client {
	return interceptor.NewClient(withWatch(c), interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			err := c.SubResource(sub).Update(ctx, obj, opts...)
			if err == nil && sub == "status" {
				record(obj.DeepCopyObject().(client.Object))
			}
			return err
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			err := c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			if err == nil && sub == "status" {
				record(obj.DeepCopyObject().(client.Object))
			}
			return err
		},
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, ac runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			err := c.SubResource(sub).Apply(ctx, ac, opts...)
			if err == nil && sub == "status" {
				if obj, aerr := applied(c, ac); aerr == nil {
					if gerr := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); gerr == nil {
						record(obj)
					}
				}
			}
			return err
		},
	})
}

// applied is the object an apply configuration describes, typed by the
// client's scheme: the fields the writer set, nothing else.
func applied(c client.Client, ac runtime.ApplyConfiguration) (client.Object, error) {
	b, err := json.Marshal(ac)
	if err != nil {
		return nil, fmt.Errorf("read the apply configuration: %w", err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		return nil, fmt.Errorf("read the apply configuration: %w", err)
	}
	typed, err := c.Scheme().New(u.GroupVersionKind())
	if err != nil { // a kind the scheme does not know stays unstructured
		return u, nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
		return nil, fmt.Errorf("read the apply configuration: %w", err)
	}
	obj, ok := typed.(client.Object)
	if !ok {
		return u, nil
	}
	return obj, nil
}

// FailStatusWrite wraps c so that the status write (update, patch or apply) number
// nth of the object named name fails with err, as a conflict or a server
// error would; every other call goes through. It returns the client and a
// function that reports whether the failure happened yet.
func FailStatusWrite(c client.Client, name string, nth int, err error) (client.Client, func() bool) {
	seen := 0 // FailStatusWriteWhen calls when under its lock
	return FailStatusWriteWhen(c, func(obj client.Object) bool {
		if obj.GetName() != name {
			return false
		}
		seen++
		return seen == nth
	}, err)
}

// FailStatusWriteWhen wraps c so that the first status write (update,
// patch or apply) for which when returns true fails with err; when sees the
// object as it was to be written (for an apply, the fields it sets), each
// status write once, until one failed. It
// returns the client and a function that reports whether the failure
// happened yet.
func FailStatusWriteWhen(c client.Client, when func(client.Object) bool, err error) (client.Client, func() bool) {
	var mu sync.Mutex
	failed := false
	fail := func(obj client.Object, sub string) error {
		if sub != "status" {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if !failed && when(obj) {
			failed = true
			return err
		}
		return nil
	}
	wrapped := interceptor.NewClient(withWatch(c), interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if err := fail(obj, sub); err != nil {
				return err
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if err := fail(obj, sub); err != nil {
				return err
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, ac runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			if obj, aerr := applied(c, ac); aerr == nil {
				if err := fail(obj, sub); err != nil {
					return err
				}
			}
			return c.SubResource(sub).Apply(ctx, ac, opts...)
		},
	})
	return wrapped, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return failed
	}
}

// withWatch lets interceptor wrap a client that cannot watch.
func withWatch(c client.Client) client.WithWatch {
	if w, ok := c.(client.WithWatch); ok {
		return w
	}
	return noWatch{c}
}

type noWatch struct{ client.Client }

func (noWatch) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	return nil, fmt.Errorf("watch is not supported by this client")
}
