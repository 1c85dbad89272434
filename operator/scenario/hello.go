package scenario

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/operator-lab/lab/operator/api/v1alpha1"
	"github.com/operator-lab/lab/operator/switches"
)

const lab31 = "3.1"

func init() {
	register(lab31,
		Scenario{Name: "create", Summary: "create a HelloWorld and wait until it is Ready",
			run: func(ctx context.Context, d *driver) error {
				_, err := d.helloReady(ctx, "hello")
				return err
			}},
		Scenario{Name: "update-burst", Summary: "change a Ready HelloWorld five times in a row: the queue merges the events",
			run: func(ctx context.Context, d *driver) error {
				hw, err := d.helloReady(ctx, "hello")
				if err != nil {
					return err
				}
				for i := 1; i <= 5; i++ {
					if err := d.update(ctx, hw, fmt.Sprintf("message → update %d", i), func() {
						hw.Spec.Message = fmt.Sprintf("Hello, update %d", i)
					}); err != nil {
						return err
					}
				}
				return d.waitHelloReady(ctx, hw, hw.Generation)
			}},
		Scenario{Name: "delete", Summary: "delete a Ready HelloWorld: the reconcile that follows finds nothing and ends in success",
			run: func(ctx context.Context, d *driver) error {
				hw, err := d.helloReady(ctx, "hello")
				if err != nil {
					return err
				}
				if err := d.delete(ctx, hw); err != nil {
					return err
				}
				return d.waitGone(ctx, hw)
			}},
		Scenario{Name: "not-found", Summary: "create and at once delete a HelloWorld: the queued request meets a NotFound",
			run: func(ctx context.Context, d *driver) error {
				hw := newHello("ghost", 1)
				if err := d.create(ctx, hw, "deleted right away"); err != nil {
					return err
				}
				if err := d.delete(ctx, hw); err != nil {
					return err
				}
				return d.waitGone(ctx, hw)
			}},
		Scenario{Name: "permanent-error", Summary: "count 11 is over the limit: a TerminalError, no retries until the spec is fixed",
			run: func(ctx context.Context, d *driver) error {
				hw := newHello("too-loud", v1alpha1.MaxHelloCount+1)
				if err := d.create(ctx, hw, fmt.Sprintf("count %d > %d", hw.Spec.Count, v1alpha1.MaxHelloCount)); err != nil {
					return err
				}
				if err := d.waitFor(ctx, hw, "Failed=True (InvalidSpec)", func(found bool) error {
					if found && meta.IsStatusConditionTrue(hw.Status.Conditions, v1alpha1.ConditionFailed) {
						return nil
					}
					return errNotYet
				}); err != nil {
					return err
				}
				if err := d.pause(ctx, 5*time.Second, "no retries happen"); err != nil {
					return err
				}
				if err := d.update(ctx, hw, "count → 3 (fixed)", func() { hw.Spec.Count = 3 }); err != nil {
					return err
				}
				return d.waitHelloReady(ctx, hw, hw.Generation)
			}},
		Scenario{Name: "external-outage", Summary: "the dependency goes down before a HelloWorld is created, then comes back",
			run: func(ctx context.Context, d *driver) error {
				if err := d.set(switches.NameExternal, string(switches.ExternalDown)); err != nil {
					return err
				}
				hw := newHello("hello", 2)
				if err := d.create(ctx, hw, ""); err != nil {
					return err
				}
				if err := d.waitFor(ctx, hw, "DependencyAvailable=False", func(found bool) error {
					if found && meta.IsStatusConditionFalse(hw.Status.Conditions, v1alpha1.ConditionDependencyAvailable) {
						return nil
					}
					return errNotYet
				}); err != nil {
					return err
				}
				if err := d.pause(ctx, 15*time.Second, "retries while the dependency is down"); err != nil {
					return err
				}
				if err := d.set(switches.NameExternal, string(switches.ExternalHealthy)); err != nil {
					return err
				}
				return d.waitHelloReady(ctx, hw, hw.Generation)
			}},
		Scenario{Name: "flaky-external", Summary: "the dependency fails some calls (flakiness) while three HelloWorlds are created",
			run: func(ctx context.Context, d *driver) error {
				restore := d.env.Switches.Get().External
				if err := d.set(switches.NameExternal, string(switches.ExternalFlaky)); err != nil {
					return err
				}
				var all []*v1alpha1.HelloWorld
				for _, name := range []string{"hello-a", "hello-b", "hello-c"} {
					hw := newHello(name, 1)
					if err := d.create(ctx, hw, ""); err != nil {
						return err
					}
					all = append(all, hw)
				}
				for _, hw := range all {
					if err := d.waitHelloReady(ctx, hw, 1); err != nil {
						return err
					}
				}
				return d.set(switches.NameExternal, string(restore))
			}},
	)
}

func newHello(name string, count int32) *v1alpha1.HelloWorld {
	return &v1alpha1.HelloWorld{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1alpha1.HelloWorldSpec{Message: "Hello, world", Count: count},
	}
}

// helloReady creates a HelloWorld and waits until it is Ready.
func (d *driver) helloReady(ctx context.Context, name string) (*v1alpha1.HelloWorld, error) {
	hw := newHello(name, 3)
	if err := d.create(ctx, hw, ""); err != nil {
		return nil, err
	}
	return hw, d.waitHelloReady(ctx, hw, 1)
}

// waitHelloReady waits for Ready=True reported for at least generation.
func (d *driver) waitHelloReady(ctx context.Context, hw *v1alpha1.HelloWorld, generation int64) error {
	return d.waitFor(ctx, hw, fmt.Sprintf("Ready=True for generation %d", generation), func(found bool) error {
		if !found {
			return fmt.Errorf("it was deleted")
		}
		c := meta.FindStatusCondition(hw.Status.Conditions, v1alpha1.ConditionReady)
		if c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration >= generation {
			return nil
		}
		return errNotYet
	})
}
