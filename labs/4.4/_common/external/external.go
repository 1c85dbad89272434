// Package external describes the external database service the controllers
// of this lab provision databases in. The checks plug in a simulated one.
package external

import (
	"context"
	"errors"
)

// System is the external database service.
type System interface {
	// Healthy returns nil while the service is up.
	Healthy(ctx context.Context) error
	// Provision creates the instance called name (creating it twice is
	// harmless) and returns its endpoint.
	Provision(ctx context.Context, name string) (endpoint string, err error)
	// Configure, Deploy and Verify are the later steps of bringing it up.
	Configure(ctx context.Context, name string) error
	Deploy(ctx context.Context, name string) error
	Verify(ctx context.Context, name string) error
}

// ErrUnavailable is returned (wrapped) while the service is down.
var ErrUnavailable = errors.New("external system unavailable")
