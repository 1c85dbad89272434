package scenario

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator/switches"
)

// Env is what a scenario drives headless.
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

// Scenario is a named change to a lab: what it does to the lab's objects
// and to the external system. `lab run` runs it headless (Run: the change,
// then waits for the operator's answer); the live view's lesson demos run
// the same change (Live) and let the learner watch the answer.
type Scenario struct {
	Name    string
	Summary string
	// External, if set, is the state the external system is put in first;
	// it is healthy again Recover later (operator time: divided by the
	// timescale). The live view times that on its own clock, so the
	// learner can take the switch back by hand meanwhile.
	External switches.External
	Recover  time.Duration
	// Target says the change is made to an object that is already there:
	// the one selected in the live view, else one created (and, headless,
	// waited Ready) for it.
	Target bool
	// Did says what the change did, ahead of the key of the object it
	// names, for a status line: "deleted", "created 3 objects, the last".
	Did string

	kind *kind
	// act makes the change to o, on target if Target; it returns the keys
	// of the objects it made or changed, the one Did names last.
	act func(ctx context.Context, o Objects, target string) (keys []string, err error)
	// follow is the rest of a headless run: it waits for the operator's
	// answer to act (keys are act's) and may change things again.
	follow func(ctx context.Context, d *driver, keys []string) error
}

// Live makes the scenario's change on a running lab through o, without
// waiting for the operator; the caller has set External already. It
// returns the key of the object Did names.
func (s Scenario) Live(ctx context.Context, o Objects, target string) (string, error) {
	if s.Target && target == "" {
		var err error
		if target, err = o.Create(ctx, "", false); err != nil {
			return "", err
		}
	}
	keys, err := s.act(ctx, o, target)
	if len(keys) == 0 {
		return "", err
	}
	return keys[len(keys)-1], err
}

// Run drives the scenario to its end.
func (s Scenario) Run(ctx context.Context, env Env) error {
	if env.Emitter == nil {
		env.Emitter = observe.Discard
	}
	d := &driver{env: env, s: s,
		objects: NewClientObjects(env.Client, env.Namespace, s.kind.samples, env.Emitter, s.Name)}
	d.step("start", "", s.Summary)
	if err := d.run(ctx); err != nil {
		d.step("failed", "", err.Error())
		return fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	if err := d.settle(ctx); err != nil {
		return fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	d.step("done", "", "")
	return nil
}

// driver carries a headless run's state and its step helpers.
type driver struct {
	env     Env
	s       Scenario
	objects *ClientObjects
	// brokeAt is when the external system was put in s.External.
	brokeAt time.Time
}

func (d *driver) run(ctx context.Context) error {
	if d.s.External != "" {
		if err := d.set(switches.NameExternal, string(d.s.External)); err != nil {
			return err
		}
		d.brokeAt = time.Now()
	}
	target := ""
	if d.s.Target {
		key, err := d.objects.Create(ctx, d.s.kind.samples.Name(), false)
		if err != nil {
			return err
		}
		if err := d.waitReady(ctx, key); err != nil {
			return err
		}
		target = key
	}
	keys, err := d.s.act(ctx, d.objects, target)
	if err != nil {
		return err
	}
	return d.s.follow(ctx, d, keys)
}

func (d *driver) step(op, key, message string) {
	d.env.Emitter.Emit(observe.ScenarioEvent(observe.ScenarioStep{Actor: d.s.Name, Step: op, Key: key, Message: message}))
}

func (d *driver) set(name, value string) error {
	d.step("set", "", name+"="+value)
	return d.env.Switches.Set(name, value)
}

// recover waits out the rest of the outage, then makes the external
// system healthy again.
func (d *driver) recover(ctx context.Context) error {
	left := d.env.Switches.Scale(d.s.Recover) - time.Since(d.brokeAt)
	if left > 0 {
		if err := d.sleep(ctx, left, "retries while the external system is "+string(d.s.External)); err != nil {
			return err
		}
	}
	return d.set(switches.NameExternal, string(switches.ExternalHealthy))
}

// pause waits base (scaled by the timescale) or until ctx ends.
func (d *driver) pause(ctx context.Context, base time.Duration, why string) error {
	return d.sleep(ctx, d.env.Switches.Scale(base), why)
}

func (d *driver) sleep(ctx context.Context, wait time.Duration, why string) error {
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

// waitFor polls the object of key until check returns nil. check may
// return errNotYet (keep polling) or another error (give up); found is
// false once the object is gone.
func (d *driver) waitFor(ctx context.Context, key, what string, check func(obj client.Object, found bool) error) error {
	d.step("wait", key, what)
	timeout := d.env.Switches.Scale(10*time.Minute) + 30*time.Second
	err := wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		obj, err := d.objects.get(ctx, key)
		switch {
		case err == nil:
			err = check(obj, true)
		case apierrors.IsNotFound(err):
			err = check(obj, false)
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
		return fmt.Errorf("waiting for %s %s: gave up after %s", key, what, timeout.Round(time.Second))
	}
	return fmt.Errorf("waiting for %s %s: %w", key, what, err)
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// waitUntil waits for the object to pass c; its deletion is an error.
func (d *driver) waitUntil(ctx context.Context, key string, c check) error {
	return d.waitFor(ctx, key, c.what, func(obj client.Object, found bool) error {
		switch {
		case !found:
			return errors.New("it was deleted")
		case c.ok(obj):
			return nil
		}
		return errNotYet
	})
}

// waitReady waits until the operator reports the object Ready for the
// generation it has now.
func (d *driver) waitReady(ctx context.Context, key string) error {
	obj, err := d.objects.get(ctx, key)
	if err != nil {
		return fmt.Errorf("read %s: %w", key, err)
	}
	generation := obj.GetGeneration()
	k := d.s.kind
	return d.waitUntil(ctx, key, check{
		what: fmt.Sprintf("%s for generation %d", k.readyWhat, generation),
		ok:   func(obj client.Object) bool { return k.ready(obj, generation) },
	})
}

func (d *driver) waitEachReady(ctx context.Context, keys []string) error {
	for _, key := range keys {
		if err := d.waitReady(ctx, key); err != nil {
			return err
		}
	}
	return nil
}

// waitGone waits until the object no longer exists.
func (d *driver) waitGone(ctx context.Context, key string) error {
	return d.waitFor(ctx, key, "to be gone", func(_ client.Object, found bool) error {
		if !found {
			return nil
		}
		return errNotYet
	})
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
