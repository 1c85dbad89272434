// Package basics is exercise 2: the Reconcile signature, a deleted object,
// and an owned ConfigMap kept in sync idempotently.
package basics

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	learnv1alpha1 "example.com/lab31/api/v1alpha1"
)

// ConfigMapName is the name of the ConfigMap that holds a HelloWorld's message.
func ConfigMapName(hello *learnv1alpha1.HelloWorld) string {
	return hello.Name + "-greeting"
}

// Reconciler keeps, for every HelloWorld, a ConfigMap owned by it whose
// "message" key holds spec.message.
type Reconciler struct {
	Client client.Client
}

// Reconcile brings the HelloWorld's ConfigMap in line with the HelloWorld.
//
// This first draft works once, on a fresh cluster. Make it correct.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var hello learnv1alpha1.HelloWorld
	if err := r.Client.Get(ctx, req.NamespacedName, &hello); err != nil {
		// TODO(lab): a HelloWorld deleted after its event was queued is not a
		// failure: returning this error retries it forever with backoff.
		return ctrl.Result{}, fmt.Errorf("get HelloWorld: %w", err)
	}

	// TODO(lab): this creates on every reconcile (the second one fails with
	// AlreadyExists), never updates a changed message, and sets no owner
	// reference (the ConfigMap outlives its HelloWorld, and changes to it wake
	// nobody). Ensure it instead: create it if missing, update it only when
	// it differs, and make the HelloWorld its controller owner.
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName(&hello), Namespace: hello.Namespace},
		Data:       map[string]string{"message": hello.Spec.Message},
	}
	if err := r.Client.Create(ctx, cm); err != nil {
		return ctrl.Result{}, fmt.Errorf("create ConfigMap %s: %w", cm.Name, err)
	}
	return ctrl.Result{}, nil
}
