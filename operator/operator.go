package operator

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator/api/v1alpha1"
	"github.com/operator-lab/lab/operator/database"
	"github.com/operator-lab/lab/operator/hello"
	"github.com/operator-lab/lab/operator/internal/wiring"
	"github.com/operator-lab/lab/operator/switches"
	"github.com/operator-lab/lab/operator/world"
)

// The labs the reference operator can run.
const (
	// Lab31 runs the HelloWorld controller ("Controller Runtime deep dive").
	Lab31 = "3.1"
	// Lab44 runs the Database controller and the workload simulator ("Advanced patterns").
	Lab44 = "4.4"
)

// Labs lists the labs whose controllers this operator implements, the valid
// Options.Lab values, in a new slice. It is the one list of which labs
// exist: the lab definitions (package labs) must declare exactly these.
func Labs() []string { return []string{Lab31, Lab44} }

// CheckLab returns an error naming the valid labs if lab is not one of
// them: New's guard, and the session's before it starts anything. Commands
// check a learner's lab id against the lab definitions (labs.Get) instead,
// so that a learner sees one message, from the one registry they read.
func CheckLab(lab string) error {
	if slices.Contains(Labs(), lab) {
		return nil
	}
	return fmt.Errorf("unknown lab %q (valid: %s)", lab, strings.Join(Labs(), ", "))
}

// Options configure the operator.
type Options struct {
	// Lab selects the controllers: one of Labs ("3.1" or "4.4").
	Lab string
	// Emitter receives every event (typically an *observe.Bus). Nil: none.
	Emitter observe.Emitter
	// Switches are the live pattern switches; nil means fresh defaults that
	// emit to Emitter. Workers is read once, here, and then fixed.
	Switches *switches.Switches
	// Gate pauses reconciles for step-through; nil never pauses.
	Gate *observe.Gate
	// External is the external system; nil means a simulated one
	// (world.NewExternal) driven by Switches, seeded with Seed.
	External *world.External
	// Seed makes the simulated external system's flaky failures reproducible.
	Seed uint64
}

// Operator is a running reference operator's handles, for callers that want
// to inspect it (the TUI shows the breaker state, tests count provisions).
type Operator struct {
	Lab      string
	Switches *switches.Switches
	External *world.External
	// Database is the 4.4 reconciler (nil in lab 3.1).
	Database *database.Reconciler
	// Hello is the 3.1 reconciler (nil in lab 4.4).
	Hello *hello.Reconciler
}

// New registers the lab's controllers with mgr, each behind the observation
// layer: an observed work queue (controller.Options.NewQueue), observed watch
// handlers for the primary and owned kinds, an observed reconciler (with
// Gate) and a client that reports every call (reads from the manager's
// cache: source "cache"); the 3.1 controller also gets the manager's
// APIReader, observed (source "api"), for the Secrets it does not watch. For lab 4.4 it also registers the workload
// simulator. The manager's scheme must include this operator's API (use
// operator/scheme.New). Call it before mgr.Start.
func New(mgr ctrl.Manager, opts Options) (*Operator, error) {
	if err := CheckLab(opts.Lab); err != nil {
		return nil, err
	}
	em := opts.Emitter
	if em == nil {
		em = observe.Discard
	}
	sw := opts.Switches
	if sw == nil {
		sw = switches.New(em)
	}
	ext := opts.External
	if ext == nil {
		ext = world.NewExternal(sw, em, opts.Seed)
	}
	op := &Operator{Lab: opts.Lab, Switches: sw, External: ext}
	observedClient := observe.Client(em, mgr.GetClient())
	workers := sw.Get().Workers
	sw.MarkStarted()

	c := wiring.Controller{Workers: workers, Emitter: em, Gate: opts.Gate}
	switch opts.Lab {
	case Lab31:
		op.Hello = &hello.Reconciler{
			Client: observedClient, APIReader: observe.Reader(em, mgr.GetAPIReader()),
			Scheme: mgr.GetScheme(), Switches: sw, Dependency: ext, Emitter: em,
		}
		c.Name, c.For, c.Owns, c.Reconciler = hello.ControllerName, &v1alpha1.HelloWorld{}, []client.Object{&corev1.ConfigMap{}}, op.Hello
	case Lab44:
		op.Database = database.New(database.Options{
			Client: observedClient, Scheme: mgr.GetScheme(), Switches: sw, External: ext, Emitter: em,
		})
		c.Name, c.For, c.Owns, c.Reconciler = database.ControllerName, &v1alpha1.Database{},
			[]client.Object{&corev1.Secret{}, &appsv1.StatefulSet{}}, op.Database
		if err := world.SetupWorkloads(mgr, sw); err != nil {
			return nil, err
		}
	}
	if err := wiring.Setup(mgr, c); err != nil {
		return nil, err
	}
	return op, nil
}
