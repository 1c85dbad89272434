package cluster

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
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
}

// Call is one call the fake received: Step is a Step* name, Name the
// Database's name ("" for a health check).
type Call struct {
	Step, Name string
	Err        error
	At         time.Time
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

func (f *FakeSystem) call(step, name string) error {
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
	f.calls = append(f.calls, Call{Step: step, Name: name, Err: err, At: time.Now()})
	return err
}

// HealthCheck fails during an outage.
func (f *FakeSystem) HealthCheck(context.Context) error { return f.call(StepHealthCheck, "") }

// Provision creates the database for key (namespace/name) and returns its
// endpoint, the same one every time.
func (f *FakeSystem) Provision(_ context.Context, key, databaseName string) (string, error) {
	name := key[strings.LastIndex(key, "/")+1:]
	if err := f.call(StepProvision, name); err != nil {
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
func (f *FakeSystem) Deprovision(_ context.Context, key string) error {
	name := key[strings.LastIndex(key, "/")+1:]
	if err := f.call(StepDeprovision, name); err != nil {
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
func (f *FakeSystem) Ping(_ context.Context, endpoint string) error {
	f.mu.Lock()
	name, ok := f.endpoints[endpoint]
	f.mu.Unlock()
	if !ok {
		err := fmt.Errorf("external ping: no database at endpoint %q", endpoint)
		f.mu.Lock()
		f.calls = append(f.calls, Call{Step: StepPing, Err: err, At: time.Now()})
		f.mu.Unlock()
		return err
	}
	return f.call(StepPing, name)
}

// StatusWrites wraps c so that every successful status write (update or
// patch of the status subresource) is passed to record with the object as
// written.
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
	})
}

// FailStatusWrite wraps c so that the status write (update or patch) number
// nth of the object named name fails with err, as a conflict or a server
// error would; every other call goes through. It returns the client and a
// function that reports whether the failure happened yet.
func FailStatusWrite(c client.Client, name string, nth int, err error) (client.Client, func() bool) {
	var mu sync.Mutex
	seen, failed := 0, false
	fail := func(obj client.Object, sub string) error {
		if sub != "status" || obj.GetName() != name {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if seen++; seen == nth {
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
