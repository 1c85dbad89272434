package scenario

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator-lab/lab/operator/observe"
	"github.com/operator-lab/lab/operator/switches"
)

// Env is what a scenario drives.
type Env struct {
	// Client talks to the API server (preferably directly, not through the
	// operator's cache or observed client).
	Client client.Client
	// Namespace is where the scenario creates its objects.
	Namespace string
	Switches  *switches.Switches
	Emitter   observe.Emitter
	// Settle, if set, is called at the end to let the operator finish
	// reacting (lab run waits for the event stream to go quiet). Nil: a
	// short pause.
	Settle func(ctx context.Context) error
}

// Scenario is a named driver.
type Scenario struct {
	Name    string
	Summary string
	run     func(ctx context.Context, d *driver) error
}

// Run drives the scenario to its end.
func (s Scenario) Run(ctx context.Context, env Env) error {
	if env.Emitter == nil {
		env.Emitter = observe.Discard
	}
	d := &driver{env: env, name: s.Name}
	d.step("start", "", s.Summary)
	if err := s.run(ctx, d); err != nil {
		d.step("failed", "", err.Error())
		return fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	if err := d.settle(ctx); err != nil {
		return fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	d.step("done", "", "")
	return nil
}

// catalogue maps lab → scenario name → scenario.
var catalogue = map[string]map[string]Scenario{}

func register(lab string, scenarios ...Scenario) {
	if catalogue[lab] == nil {
		catalogue[lab] = map[string]Scenario{}
	}
	for _, s := range scenarios {
		catalogue[lab][s.Name] = s
	}
}

// Names lists the scenarios of a lab, sorted (nil for an unknown lab).
func Names(lab string) []string {
	var names []string
	for name := range catalogue[lab] {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// All returns the scenarios of a lab, sorted by name.
func All(lab string) []Scenario {
	var out []Scenario
	for _, name := range Names(lab) {
		out = append(out, catalogue[lab][name])
	}
	return out
}

// Get returns a lab's scenario by name, or an error listing the valid ones.
func Get(lab, name string) (Scenario, error) {
	byName, ok := catalogue[lab]
	if !ok {
		labs := make([]string, 0, len(catalogue))
		for l := range catalogue {
			labs = append(labs, l)
		}
		sort.Strings(labs)
		return Scenario{}, fmt.Errorf("no scenarios for lab %q (labs: %s)", lab, strings.Join(labs, ", "))
	}
	s, ok := byName[name]
	if !ok {
		return Scenario{}, fmt.Errorf("unknown scenario %q for lab %s (valid: %s)", name, lab, strings.Join(Names(lab), ", "))
	}
	return s, nil
}

// driver carries a running scenario's state and its step helpers.
type driver struct {
	env  Env
	name string
}

func (d *driver) key(name string) string { return d.env.Namespace + "/" + name }

func (d *driver) step(op, key, message string) {
	d.env.Emitter.Emit(observe.Event{Kind: observe.KindScenario, Name: d.name, Op: op, Key: key, Message: message})
}

func (d *driver) create(ctx context.Context, obj client.Object, message string) error {
	obj.SetNamespace(d.env.Namespace)
	d.step("create", d.key(obj.GetName()), message)
	if err := d.env.Client.Create(ctx, obj); err != nil {
		return fmt.Errorf("create %s: %w", obj.GetName(), err)
	}
	return nil
}

// update re-reads obj, applies change and writes it, retrying on conflicts
// (the operator writes status concurrently).
func (d *driver) update(ctx context.Context, obj client.Object, message string, change func()) error {
	d.step("update", d.key(obj.GetName()), message)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := d.env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change()
		return d.env.Client.Update(ctx, obj)
	})
	if err != nil {
		return fmt.Errorf("update %s: %w", obj.GetName(), err)
	}
	return nil
}

func (d *driver) delete(ctx context.Context, obj client.Object) error {
	d.step("delete", d.key(obj.GetName()), "")
	if err := d.env.Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s: %w", obj.GetName(), err)
	}
	return nil
}

func (d *driver) set(name, value string) error {
	d.step("set", "", name+"="+value)
	return d.env.Switches.Set(name, value)
}

// pause waits d (scaled by the timescale) or until ctx ends.
func (d *driver) pause(ctx context.Context, base time.Duration, why string) error {
	wait := d.env.Switches.Scale(base)
	d.step("wait", "", fmt.Sprintf("%s (%s)", why, wait.Round(time.Millisecond)))
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// errNotYet makes waitFor poll again.
var errNotYet = errors.New("not yet")

// pollInterval is how often waits re-read the object.
const pollInterval = 50 * time.Millisecond

// waitFor polls obj until check returns nil. check may return errNotYet
// (keep polling) or another error (give up). A NotFound read is passed to
// check as a nil object state via found=false.
func (d *driver) waitFor(ctx context.Context, obj client.Object, what string, check func(found bool) error) error {
	d.step("wait", d.key(obj.GetName()), what)
	timeout := d.env.Switches.Scale(10*time.Minute) + 30*time.Second
	err := wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		err := d.env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		switch {
		case err == nil:
			err = check(true)
		case apierrors.IsNotFound(err):
			err = check(false)
		}
		if err == nil {
			return true, nil
		}
		if errors.Is(err, errNotYet) || isContextErr(err) {
			return false, nil
		}
		return false, err
	})
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case wait.Interrupted(err):
		return fmt.Errorf("waiting for %s %s: gave up after %s", obj.GetName(), what, timeout.Round(time.Second))
	}
	return fmt.Errorf("waiting for %s %s: %w", obj.GetName(), what, err)
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

func (d *driver) settle(ctx context.Context) error {
	if d.env.Settle != nil {
		return d.env.Settle(ctx)
	}
	t := time.NewTimer(500 * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
