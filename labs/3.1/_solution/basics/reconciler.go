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
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

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
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var hello learnv1alpha1.HelloWorld
	if err := r.Client.Get(ctx, req.NamespacedName, &hello); err != nil {
		// Deleted since the event was queued: nothing to do, and not a failure.
		// The ConfigMap goes with it through its owner reference.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName(&hello), Namespace: hello.Namespace}}
	// CreateOrUpdate reads the current ConfigMap, applies the mutation, and
	// writes only when something changed: running it again is harmless.
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = map[string]string{"message": hello.Spec.Message}
		return controllerutil.SetControllerReference(&hello, cm, r.Client.Scheme())
	}); err != nil {
		return ctrl.Result{}, fmt.Errorf("ensure ConfigMap %s: %w", cm.Name, err)
	}
	return ctrl.Result{}, nil
}
