// Command runner runs your Choosing-the-Result reconciler (exercise 3) for
// `lab start 3.1 --mine`: lab builds it inside your workspace with the
// observation layer, and the live view shows what your Results make the
// work queue do. The dependency and the message service are simulated; the
// external switch (key e) changes how they answer.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/operator-lab/lab/labs/runkit"
	"github.com/operator-lab/lab/observe"

	learnv1alpha1 "example.com/lab31/api/v1alpha1"
	"example.com/lab31/results"
)

// The simulated world's settings, in the order key e cycles through them.
const (
	healthy     = "healthy"
	notReady    = "not-ready"
	failing     = "failing"
	rateLimited = "rate-limited"
)

// retryAfter is what the rate-limited service asks for.
const retryAfter = 10 * time.Second

// world is the dependency and the message service. Like the reference
// operator, the service refuses for good a greeting repeated more than
// MaxHelloCount times (the live view's invalid sample has count 11).
type world struct {
	mode runkit.Setting
	em   observe.Emitter
}

// answer reports one call as an external event and returns err.
func (w *world) answer(ctx context.Context, op string, err error) error {
	call := observe.ExternalCall{Op: op, Outcome: observe.OutcomeOK}
	if err != nil {
		call.Outcome, call.Error = observe.OutcomeError, err.Error()
	}
	observe.Emit(ctx, w.em, observe.ExternalEvent(call))
	return err
}

func (w *world) Ready(ctx context.Context, _ *learnv1alpha1.HelloWorld) (bool, error) {
	switch w.mode.Get() {
	case failing:
		return false, w.answer(ctx, "dependency", errors.New("dependency check: connection refused"))
	case notReady:
		// An answer, but not the one wanted: the call is not ok, and the
		// live view must not show it as a success.
		observe.Emit(ctx, w.em, observe.ExternalEvent(observe.ExternalCall{Op: "dependency", Outcome: notReady}))
		return false, nil
	}
	return true, w.answer(ctx, "dependency", nil)
}

func (w *world) Send(ctx context.Context, g *learnv1alpha1.HelloWorld) error {
	switch {
	case g.Spec.Count > learnv1alpha1.MaxHelloCount:
		return w.answer(ctx, "send", fmt.Errorf("count %d, at most %d: %w", g.Spec.Count, learnv1alpha1.MaxHelloCount, results.ErrRejected))
	case w.mode.Get() == rateLimited:
		return w.answer(ctx, "send", &results.RateLimitedError{RetryAfter: retryAfter})
	}
	return w.answer(ctx, "send", nil)
}

func main() {
	w := &world{}
	err := runkit.Run(runkit.Program{
		AddToScheme: learnv1alpha1.AddToScheme,
		Switch:      runkit.Switch{Name: "external", Values: []string{healthy, notReady, failing, rateLimited}, Set: w.mode.Set},
		Setup: func(mgr ctrl.Manager, k *runkit.Kit) error {
			w.em = k.Emitter
			r := &results.Reconciler{
				Client:          k.Client(mgr.GetClient()),
				Dependency:      w,
				Sender:          w,
				DependencyRetry: 5 * time.Second,
			}
			// Watches rather than For, so the watch events are seen too.
			return ctrl.NewControllerManagedBy(mgr).
				Named("helloworld").
				Watches(&learnv1alpha1.HelloWorld{},
					k.Handler("helloworld", &learnv1alpha1.HelloWorld{}, &handler.EnqueueRequestForObject{}),
					builder.WithPredicates(predicate.GenerationChangedPredicate{})).
				WithOptions(k.ControllerOptions()).
				Complete(k.Reconciler("helloworld", r))
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "runner:", err)
		os.Exit(1)
	}
}
