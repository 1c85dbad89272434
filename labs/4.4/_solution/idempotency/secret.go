// Package idempotency is exercise 3: an "ensure" operation that can run any
// number of times, and after a stale read, with one result.
package idempotency

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	learnv1alpha1 "example.com/lab44/api/v1alpha1"
)

// EnsureSecret makes the Database's credentials Secret (SecretName) hold
// its username, database and endpoint and a password generated once, owned
// by the Database (controller reference). It creates it when missing,
// updates it only when it drifted, and survives losing a create race.
func EnsureSecret(ctx context.Context, c client.Client, db *learnv1alpha1.Database) error {
	ensure := func() error {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: SecretName(db.Name), Namespace: db.Namespace}}
		_, err := controllerutil.CreateOrUpdate(ctx, c, secret, func() error {
			// CreateOrUpdate compares before and after: equal data, no write.
			if secret.Data == nil {
				secret.Data = map[string][]byte{}
			}
			for k, v := range desiredData(db) {
				secret.Data[k] = v
			}
			if len(secret.Data[SecretKeyPassword]) == 0 {
				password, err := newPassword()
				if err != nil {
					return err
				}
				secret.Data[SecretKeyPassword] = password
			}
			return controllerutil.SetControllerReference(db, secret, c.Scheme())
		})
		return err
	}
	err := ensure()
	if apierrors.IsAlreadyExists(err) {
		// Our read was stale (a cache behind, or another writer won the
		// race): the Secret exists now, so make it right instead. (Under a
		// lagging cache this second read may miss too: then the error goes
		// back to the queue, and the retry finds the Secret.)
		err = ensure()
	}
	if err != nil {
		return fmt.Errorf("ensure Secret %s: %w", SecretName(db.Name), err)
	}
	return nil
}

// The credentials Secret, named and keyed as the reference operator's
// (operator/database/resources.go).
const (
	SecretKeyUsername = "username"
	SecretKeyPassword = "password"
	SecretKeyDatabase = "database"
	SecretKeyEndpoint = "endpoint"
)

// SecretName is the name of the credentials Secret of the Database named name.
func SecretName(name string) string { return name + "-credentials" }

// desiredData is what the Secret holds besides the password.
func desiredData(db *learnv1alpha1.Database) map[string][]byte {
	return map[string][]byte{
		SecretKeyUsername: []byte(db.Spec.Username),
		SecretKeyDatabase: []byte(db.Spec.DatabaseName),
		SecretKeyEndpoint: []byte(db.Status.Endpoint),
	}
}

// newPassword generates a password; a Secret's password is generated once
// and then kept.
func newPassword() ([]byte, error) {
	raw := make([]byte, 18)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("generate a password: %w", err)
	}
	return []byte(base64.RawURLEncoding.EncodeToString(raw)), nil
}
