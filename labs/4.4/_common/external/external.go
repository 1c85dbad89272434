// Package external describes the external database service the controllers
// of this lab provision databases in: the same four operations the
// reference operator calls (operator/database's External, served by
// operator/world's simulated system). The checks plug in a simulated one.
package external

import (
	"context"
	"errors"
)

// System is the external database service.
type System interface {
	// HealthCheck returns nil while the service is reachable and answering.
	HealthCheck(ctx context.Context) error
	// Provision creates the database databaseName for the Database key
	// (namespace/name) and returns its endpoint. It is idempotent:
	// provisioning the same key again returns the same endpoint.
	Provision(ctx context.Context, key, databaseName string) (endpoint string, err error)
	// Ping checks that a provisioned database answers at endpoint.
	Ping(ctx context.Context, endpoint string) error
	// Deprovision drops the database provisioned for key. Dropping one
	// that is not there succeeds, so a retry after a lost reply is safe.
	Deprovision(ctx context.Context, key string) error
}

// ErrUnavailable is returned (wrapped) while the service is down; test it
// with errors.Is. It is the reference operator's "external system unavailable".
var ErrUnavailable = errors.New("external system unavailable")

// Key is the key Provision takes for the Database namespace/name.
func Key(namespace, name string) string { return namespace + "/" + name }
