// Package operator assembles lab's reference operator: the API types
// (operator/api/v1alpha1, CRDs in operator/crds), the lab 3.1 HelloWorld
// controller (operator/hello), the lab 4.4 Database controller
// (operator/database), the pattern switches (operator/switches) and the
// simulated world (operator/world), all observed through observe/.
//
// Typical use (what `lab run` and the TUI do):
//
//	scheme, _ := scheme.New()
//	mgr, _ := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme, ...})
//	bus := observe.NewBus()
//	sw := switches.New(bus)
//	_ = sw.Apply("timescale=10")
//	op, err := operator.New(mgr, operator.Options{Lab: "4.4", Emitter: bus, Switches: sw})
//	go mgr.Start(ctx)
//
// Switches keep working while the manager runs (except workers, fixed at New).
package operator
