package scenario

import (
	"context"
	"fmt"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator-lab/lab/observe"
)

// Objects is what a scenario changes: the lab's sample objects. Keys are
// "namespace/name". `lab run` drives them through a client (ClientObjects);
// the live view through its controls, where the learner's session decides
// the names.
type Objects interface {
	// Create makes a sample object and returns its key. name is what a
	// headless run calls it (a trace reads better with "ghost" than with
	// "orders-2"); "" asks for the next numbered sample, and a live lab,
	// which already has objects, may always number them. invalid gives it
	// a spec the controller rejects for good.
	Create(ctx context.Context, name string, invalid bool) (key string, err error)
	// Update changes the object's spec n times in a row, each a new generation.
	Update(ctx context.Context, key string, n int) error
	// Delete deletes the object; one already gone is not an error.
	Delete(ctx context.Context, key string) error
}

// Samples makes and changes the objects of one controller's kind: the
// reference operator's (Reference) or the learner's own (`lab start --mine`).
type Samples interface {
	// Name is the first sample's name; more are numbered: name-2, name-3, …
	Name() string
	// New is a sample named name in namespace; invalid takes a spec the
	// controller must give up on, and message says what is special.
	New(namespace, name string, invalid bool) (obj client.Object, message string, err error)
	// Empty is an object of the kind to read into.
	Empty() client.Object
	// Change makes one spec change (a new generation) and says what it was.
	Change(obj client.Object) (string, error)
}

// Prerequisites is what Samples implement whose objects refer to others of
// another kind, which must exist first: lab 3.1's HelloWorlds name a Secret
// in spec.secretRef. ClientObjects creates them once, in its namespace,
// before the first sample.
type Prerequisites interface {
	Prerequisites(namespace string) []Prerequisite
}

// Prerequisite is one object the samples refer to, and what to say about it
// when it is created.
type Prerequisite struct {
	Object  client.Object
	Message string
}

// ClientObjects are the sample objects of one namespace, changed through a
// client. Each action is announced as a scenario event named after the
// actor ("you" in the live view, the scenario's name in `lab run`), so the
// stream says who did what next to what the operator did about it.
type ClientObjects struct {
	client    client.Client
	namespace string
	samples   Samples
	emitter   observe.Emitter
	actor     string

	mu   sync.Mutex
	made int

	// prepared is set once the samples' prerequisites exist; prepareMu
	// makes a concurrent Create wait until they do.
	prepareMu sync.Mutex
	prepared  bool
}

// NewClientObjects drives samples in namespace through c, announcing each
// action to em (nil: nowhere) as actor.
func NewClientObjects(c client.Client, namespace string, samples Samples, em observe.Emitter, actor string) *ClientObjects {
	if em == nil {
		em = observe.Discard
	}
	return &ClientObjects{client: c, namespace: namespace, samples: samples, emitter: em, actor: actor}
}

func (o *ClientObjects) announce(op, key, message string) {
	o.emitter.Emit(observe.ScenarioEvent(observe.ScenarioStep{Actor: o.actor, Step: op, Key: key, Message: message}))
}

func (o *ClientObjects) key(name string) string { return o.namespace + "/" + name }

// Create makes a sample named name, or the next numbered one for "".
func (o *ClientObjects) Create(ctx context.Context, name string, invalid bool) (string, error) {
	if name == "" {
		o.mu.Lock()
		o.made++
		name = Numbered(o.samples.Name(), o.made)
		o.mu.Unlock()
	}
	obj, message, err := o.samples.New(o.namespace, name, invalid)
	if err != nil {
		return "", err
	}
	if err := o.prepare(ctx); err != nil {
		return "", err
	}
	key := o.key(obj.GetName())
	o.announce("create", key, message)
	if err := o.client.Create(ctx, obj); err != nil {
		return "", fmt.Errorf("create %s: %w", key, err)
	}
	return key, nil
}

// prepare creates the samples' prerequisites, if they have any and this
// is the first Create; each is announced like a sample. One that exists
// already (made by an earlier run in the namespace) is fine.
func (o *ClientObjects) prepare(ctx context.Context) error {
	p, ok := o.samples.(Prerequisites)
	if !ok {
		return nil
	}
	o.prepareMu.Lock()
	defer o.prepareMu.Unlock()
	if o.prepared {
		return nil
	}
	for _, pre := range p.Prerequisites(o.namespace) {
		key := o.key(pre.Object.GetName())
		o.announce("create", key, pre.Message)
		if err := o.client.Create(ctx, pre.Object); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %s: %w", key, err)
		}
	}
	o.prepared = true
	return nil
}

// Update makes the samples' spec change n times in a row.
func (o *ClientObjects) Update(ctx context.Context, key string, n int) error {
	for i := 0; i < n; i++ {
		if err := o.change(ctx, key, o.samples.Change); err != nil {
			return err
		}
	}
	return nil
}

// change re-reads the object, applies edit and writes it, retrying on
// conflicts (the operator writes status concurrently). The action is
// announced before the write, so the stream shows it ahead of the watch
// event it causes; once, however many conflicts it takes.
func (o *ClientObjects) change(ctx context.Context, key string, edit func(client.Object) (string, error)) error {
	nn, err := parseKey(key)
	if err != nil {
		return err
	}
	obj := o.samples.Empty()
	announced := false
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := o.client.Get(ctx, nn, obj); err != nil {
			return err
		}
		what, err := edit(obj)
		if err != nil {
			return err
		}
		if !announced {
			o.announce("update", key, what)
			announced = true
		}
		return o.client.Update(ctx, obj)
	})
	if err != nil {
		return fmt.Errorf("update %s: %w", key, err)
	}
	return nil
}

// Delete deletes the object.
func (o *ClientObjects) Delete(ctx context.Context, key string) error {
	nn, err := parseKey(key)
	if err != nil {
		return err
	}
	obj := o.samples.Empty()
	obj.SetNamespace(nn.Namespace)
	obj.SetName(nn.Name)
	o.announce("delete", key, "")
	if err := o.client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

// get reads the object of key into a new object of the samples' kind.
func (o *ClientObjects) get(ctx context.Context, key string) (client.Object, error) {
	nn, err := parseKey(key)
	if err != nil {
		return nil, err
	}
	obj := o.samples.Empty()
	return obj, o.client.Get(ctx, nn, obj)
}

// Numbered is the n-th name of a series: base, base-2, base-3, …
func Numbered(base string, n int) string {
	if n <= 1 {
		return base
	}
	return fmt.Sprintf("%s-%d", base, n)
}

func parseKey(key string) (client.ObjectKey, error) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok || ns == "" || name == "" {
		return client.ObjectKey{}, fmt.Errorf("object key %q is not namespace/name", key)
	}
	return client.ObjectKey{Namespace: ns, Name: name}, nil
}
