// Command runner runs your whole Database reconciler (exercise 7,
// "together") for `lab start 4.4 --mine`: lab builds it inside your
// workspace with the observation layer, so the live view shows your phases,
// your backoff delays and your breaker at work. The external database
// service is simulated; the external switch (key e) takes it down or makes
// it flaky.
package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/operator-lab/lab/labs/runkit"
	"github.com/operator-lab/lab/observe"

	learnv1alpha1 "example.com/lab44/api/v1alpha1"
	"example.com/lab44/backoff"
	"example.com/lab44/breaker"
	"example.com/lab44/external"
	"example.com/lab44/together"
)

// The simulated service's settings, in the order key e cycles through them.
const (
	healthy = "healthy"
	down    = "down"
	flaky   = "flaky" // each call fails with probability flakyFailures
)

const flakyFailures = 0.4

// system is the simulated external database service.
type system struct {
	mode runkit.Setting
	em   observe.Emitter
}

// call answers one call according to the mode and reports it as an
// external event, with the reference operator's operation names.
func (s *system) call(ctx context.Context, op string) error {
	start := time.Now()
	mode := s.mode.Get()
	var err error
	switch {
	case mode == down:
		err = fmt.Errorf("external %s: %w", op, external.ErrUnavailable)
	case mode == flaky && op != opHealthCheck && rand.Float64() < flakyFailures:
		err = fmt.Errorf("external %s: %w", op, external.ErrUnavailable)
	}
	call := observe.ExternalCall{Op: op, Outcome: observe.OutcomeOK, Latency: time.Since(start)}
	if err != nil {
		call.Outcome, call.Error = observe.OutcomeError, err.Error()
	}
	observe.Emit(ctx, s.em, observe.ExternalEvent(call))
	return err
}

// The operations, named as the reference operator's simulated system names them.
const (
	opHealthCheck = "healthcheck"
	opProvision   = "provision"
	opPing        = "ping"
	opDeprovision = "deprovision"
)

func (s *system) HealthCheck(ctx context.Context) error { return s.call(ctx, opHealthCheck) }
func (s *system) Provision(ctx context.Context, key, databaseName string) (string, error) {
	if err := s.call(ctx, opProvision); err != nil {
		return "", err
	}
	return databaseName + "." + strings.ReplaceAll(key, "/", "-") + ".db.example:5432", nil
}
func (s *system) Ping(ctx context.Context, endpoint string) error { return s.call(ctx, opPing) }
func (s *system) Deprovision(ctx context.Context, key string) error {
	return s.call(ctx, opDeprovision)
}

// watchBreaker reports the breaker's state changes as breaker events; your
// breaker does not emit events itself, so it is looked at often.
func watchBreaker(ctx context.Context, b *breaker.Breaker, em observe.Emitter) {
	last := b.State()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if now := b.State(); now != last {
				em.Emit(observe.BreakerEvent(string(last), string(now), 0)) // failures: your breaker does not tell
				last = now
			}
		}
	}
}

func main() {
	sys := &system{}
	err := runkit.Run(runkit.Program{
		AddToScheme: learnv1alpha1.AddToScheme,
		Switch:      runkit.Switch{Name: "external", Values: []string{healthy, down, flaky}, Set: sys.mode.Set},
		Setup: func(mgr ctrl.Manager, k *runkit.Kit) error {
			sys.em = k.Emitter
			b := breaker.New(3, 5*time.Second, breaker.RealClock{})
			go watchBreaker(context.Background(), b, k.Emitter)
			r := &together.Reconciler{
				Client:  k.Client(mgr.GetClient()),
				System:  sys,
				Breaker: b,
				Backoff: backoff.Policy{Base: 500 * time.Millisecond, Max: 30 * time.Second},
			}
			// Watches rather than For and Owns, so the watch events are seen too.
			// Every Database event counts, status writes included: each
			// persisted phase brings the next reconcile, as in the operator.
			owner := handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &learnv1alpha1.Database{}, handler.OnlyControllerOwner())
			return ctrl.NewControllerManagedBy(mgr).Named("database").
				Watches(&learnv1alpha1.Database{},
					k.Handler("database", &learnv1alpha1.Database{}, &handler.EnqueueRequestForObject{})).
				Watches(&corev1.Secret{}, k.Handler("database", &corev1.Secret{}, owner)).
				Watches(&appsv1.StatefulSet{}, k.Handler("database", &appsv1.StatefulSet{}, owner)).
				WithOptions(k.ControllerOptions()).
				Complete(k.Reconciler("database", r))
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "runner:", err)
		os.Exit(1)
	}
}
