// Package idempotency is exercise 3: an "ensure" operation that can run any
// number of times, and concurrently with a stale cache, with one result.
package idempotency

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	learnv1alpha1 "example.com/lab44/api/v1alpha1"
)

// EnsureSecret makes the Secret name in the Database's namespace hold
// exactly data, owned by the Database. It creates it when missing, updates
// it only when it drifted, and survives losing a create race.
func EnsureSecret(ctx context.Context, c client.Client, db *learnv1alpha1.Database, name string, data map[string][]byte) error {
	// TODO(lab): this creates every time (AlreadyExists from the second call
	// on), never repairs drift, sets no owner, and would update blindly if it
	// did. Read first, write only what differs, own it, and treat a lost
	// create race (AlreadyExists after a stale read) as "now update it".
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: db.Namespace},
		Data:       data,
	}
	if err := c.Create(ctx, secret); err != nil {
		return fmt.Errorf("create Secret %s: %w", name, err)
	}
	return nil
}
