package operator_test

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"

	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator"
	"github.com/operator-lab/lab/operator/switches"
)

// Run lab 4.4's operator on a cluster, watching its events, with ten times
// shorter delays and the circuit breaker off.
func ExampleNew() {
	var cfg *rest.Config // from a control plane or a kubeconfig
	ctx := context.Background()

	mgr, err := operator.NewManager(cfg, operator.ManagerOptions{Namespace: "demo"})
	if err != nil {
		fmt.Println(err)
		return
	}
	bus := observe.NewBus()
	events := bus.Subscribe(observe.DefaultBuffer)
	sw := switches.New(bus)
	if err := sw.Apply("timescale=10,breaker=off"); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := operator.New(mgr, operator.Options{Lab: operator.Lab44, Emitter: bus, Switches: sw}); err != nil {
		fmt.Println(err)
		return
	}
	go func() {
		for e := range events.C {
			fmt.Println(e.Kind, e.Key)
		}
	}()
	// Switches can change while it runs: the next reconciles see it.
	go func() { _ = sw.Set("external", "down") }()
	_ = mgr.Start(ctx)
}
