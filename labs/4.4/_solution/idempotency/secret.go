// Package idempotency is exercise 3: an "ensure" operation that can run any
// number of times, and concurrently with a stale cache, with one result.
package idempotency

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	learnv1alpha1 "example.com/lab44/api/v1alpha1"
)

// EnsureSecret makes the Secret name in the Database's namespace hold
// exactly data, owned by the Database. It creates it when missing, updates
// it only when it drifted, and survives losing a create race.
func EnsureSecret(ctx context.Context, c client.Client, db *learnv1alpha1.Database, name string, data map[string][]byte) error {
	ensure := func() error {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: db.Namespace}}
		_, err := controllerutil.CreateOrUpdate(ctx, c, secret, func() error {
			// CreateOrUpdate compares before and after: equal data, no write.
			secret.Data = maps.Clone(data)
			return controllerutil.SetControllerReference(db, secret, c.Scheme())
		})
		return err
	}
	err := ensure()
	if apierrors.IsAlreadyExists(err) {
		// Our read was stale (a cache behind, or another worker won the
		// race): the Secret exists now, so make it right instead.
		err = ensure()
	}
	if err != nil {
		return fmt.Errorf("ensure Secret %s: %w", name, err)
	}
	return nil
}
