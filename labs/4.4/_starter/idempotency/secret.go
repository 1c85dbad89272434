// Package idempotency is exercise 3: an "ensure" operation that can run any
// number of times, and after a stale read, with one result.
package idempotency

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	learnv1alpha1 "example.com/lab44/api/v1alpha1"
)

// EnsureSecret makes the Database's credentials Secret (SecretName) hold
// its username, database and endpoint and a password generated once, owned
// by the Database (controller reference). It creates it when missing,
// updates it only when it drifted, and survives losing a create race.
func EnsureSecret(ctx context.Context, c client.Client, db *learnv1alpha1.Database) error {
	// TODO(lab): this creates every time (AlreadyExists from the second call
	// on), never repairs drift, sets no owner, and would make a new password
	// each time if it did. Read first, write only what differs (keep an
	// existing password), own it, and treat a lost create race
	// (AlreadyExists after a stale read) as "now update it".
	password, err := newPassword()
	if err != nil {
		return err
	}
	data := desiredData(db)
	data[SecretKeyPassword] = password
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: SecretName(db.Name), Namespace: db.Namespace},
		Data:       data,
	}
	if err := c.Create(ctx, secret); err != nil {
		return fmt.Errorf("create Secret %s: %w", secret.Name, err)
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
