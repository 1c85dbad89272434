package scenario

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator-lab/lab/operator/api/v1alpha1"
	"github.com/operator-lab/lab/operator/switches"
)

const lab44 = "4.4"

func init() {
	register(lab44,
		Scenario{Name: "create", Summary: "create a Database and follow it through every phase to Ready",
			run: func(ctx context.Context, d *driver) error {
				_, err := d.databaseReady(ctx, "orders")
				return err
			}},
		Scenario{Name: "update-burst", Summary: "change a Ready Database five times in a row: Updating once the queue merges the events",
			run: func(ctx context.Context, d *driver) error {
				db, err := d.databaseReady(ctx, "orders")
				if err != nil {
					return err
				}
				for i := 1; i <= 5; i++ {
					replicas := int32(2 + i%2)
					if err := d.update(ctx, db, fmt.Sprintf("replicas → %d", replicas), func() { db.Spec.Replicas = replicas }); err != nil {
						return err
					}
				}
				return d.waitDatabaseReady(ctx, db, db.Generation)
			}},
		Scenario{Name: "delete", Summary: "delete a Ready Database: the reconcile that follows finds nothing and ends in success",
			run: func(ctx context.Context, d *driver) error {
				db, err := d.databaseReady(ctx, "orders")
				if err != nil {
					return err
				}
				if err := d.delete(ctx, db); err != nil {
					return err
				}
				return d.waitGone(ctx, db)
			}},
		Scenario{Name: "not-found", Summary: "create and at once delete a Database: the queued request meets a NotFound",
			run: func(ctx context.Context, d *driver) error {
				db := newDatabase("ghost")
				if err := d.create(ctx, db, "deleted right away"); err != nil {
					return err
				}
				if err := d.delete(ctx, db); err != nil {
					return err
				}
				return d.waitGone(ctx, db)
			}},
		Scenario{Name: "permanent-error", Summary: "storage \"lots\" is not a quantity: Failed with a TerminalError until the spec is fixed",
			run: func(ctx context.Context, d *driver) error {
				db := newDatabase("orders")
				db.Spec.Storage = "lots"
				if err := d.create(ctx, db, `storage "lots"`); err != nil {
					return err
				}
				if err := d.waitPhase(ctx, db, v1alpha1.PhaseFailed); err != nil {
					return err
				}
				if err := d.pause(ctx, 5*time.Second, "no retries happen"); err != nil {
					return err
				}
				if err := d.update(ctx, db, "storage → 1Gi (fixed)", func() { db.Spec.Storage = "1Gi" }); err != nil {
					return err
				}
				return d.waitDatabaseReady(ctx, db, db.Generation)
			}},
		Scenario{Name: "external-outage", Summary: "the external system goes down while a Database is created, then comes back",
			run: func(ctx context.Context, d *driver) error {
				if err := d.set(switches.NameExternal, string(switches.ExternalDown)); err != nil {
					return err
				}
				db := newDatabase("orders")
				if err := d.create(ctx, db, ""); err != nil {
					return err
				}
				if err := d.waitPhase(ctx, db, v1alpha1.PhaseFailed); err != nil {
					return err
				}
				// Long enough for several backoff steps (5s, 10s, 20s) and,
				// with the breaker on, for it to open.
				if err := d.pause(ctx, 40*time.Second, "retries while the external system is down"); err != nil {
					return err
				}
				if err := d.set(switches.NameExternal, string(switches.ExternalHealthy)); err != nil {
					return err
				}
				return d.waitDatabaseReady(ctx, db, db.Generation)
			}},
		Scenario{Name: "flaky-external", Summary: "the external system fails some calls while three Databases are created",
			run: func(ctx context.Context, d *driver) error {
				restore := d.env.Switches.Get().External
				if err := d.set(switches.NameExternal, string(switches.ExternalFlaky)); err != nil {
					return err
				}
				var all []*v1alpha1.Database
				for _, name := range []string{"orders", "billing", "ledger"} {
					db := newDatabase(name)
					if err := d.create(ctx, db, ""); err != nil {
						return err
					}
					all = append(all, db)
				}
				for _, db := range all {
					if err := d.waitDatabaseReady(ctx, db, 1); err != nil {
						return err
					}
				}
				return d.set(switches.NameExternal, string(restore))
			}},
	)
}

func newDatabase(name string) *v1alpha1.Database {
	return &v1alpha1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.DatabaseSpec{
			Image: "postgres:17", Replicas: 1, DatabaseName: name, Username: "app", Storage: "1Gi",
		},
	}
}

func (d *driver) databaseReady(ctx context.Context, name string) (*v1alpha1.Database, error) {
	db := newDatabase(name)
	if err := d.create(ctx, db, ""); err != nil {
		return nil, err
	}
	return db, d.waitDatabaseReady(ctx, db, 1)
}

func (d *driver) waitPhase(ctx context.Context, db *v1alpha1.Database, phase v1alpha1.Phase) error {
	return d.waitFor(ctx, db, "phase "+string(phase), func(found bool) error {
		if !found {
			return fmt.Errorf("it was deleted")
		}
		if db.Status.Phase == phase {
			return nil
		}
		return errNotYet
	})
}

// waitDatabaseReady waits for phase Ready with at least generation rolled out.
func (d *driver) waitDatabaseReady(ctx context.Context, db *v1alpha1.Database, generation int64) error {
	return d.waitFor(ctx, db, fmt.Sprintf("phase Ready for generation %d", generation), func(found bool) error {
		if !found {
			return fmt.Errorf("it was deleted")
		}
		if db.Status.Phase == v1alpha1.PhaseReady && db.Status.ObservedGeneration >= generation {
			return nil
		}
		return errNotYet
	})
}

// waitGone waits until obj no longer exists.
func (d *driver) waitGone(ctx context.Context, obj client.Object) error {
	return d.waitFor(ctx, obj, "to be gone", func(found bool) error {
		if !found {
			return nil
		}
		return errNotYet
	})
}
