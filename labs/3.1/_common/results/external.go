package results

import (
	"context"
	"errors"
	"fmt"
	"time"

	learnv1alpha1 "example.com/lab31/api/v1alpha1"
)

// Dependency tells whether something a HelloWorld needs (say, the mail
// relay it is sent through) is ready yet.
type Dependency interface {
	Ready(ctx context.Context, hello *learnv1alpha1.HelloWorld) (bool, error)
}

// Sender delivers a HelloWorld to an external service.
//
// Send's errors tell what kind of failure it was:
//   - errors.Is(err, ErrRejected): the service will never accept this
//     message as the spec asks for it; retrying cannot help.
//   - errors.As(err, &*RateLimitedError): too many calls; the error says
//     when to try again.
//   - anything else: a transient failure (timeout, connection reset).
type Sender interface {
	Send(ctx context.Context, hello *learnv1alpha1.HelloWorld) error
}

// ErrRejected is a permanent failure: the message is not acceptable, and
// only a change to the spec can fix it.
var ErrRejected = errors.New("message rejected")

// RateLimitedError says the service is throttling us.
type RateLimitedError struct {
	RetryAfter time.Duration
}

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("rate limited: retry after %s", e.RetryAfter)
}
