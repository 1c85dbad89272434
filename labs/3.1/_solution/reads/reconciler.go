// Package reads is exercise 4: which reads come from the informer cache and
// which must go to the API server.
package reads

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	learnv1alpha1 "example.com/lab31/api/v1alpha1"
)

// SignatureKey is the key of the Secret data appended to the message.
const SignatureKey = "signature"

// ConfigMapName is the name of the ConfigMap that holds a Greeting's signed message.
func ConfigMapName(greeting *learnv1alpha1.Greeting) string {
	return greeting.Name + "-signed"
}

// Reconciler writes each Greeting's message, signed with the Secret named
// in spec.secretRef, into a ConfigMap it owns.
//
// This controller watches Greetings and ConfigMaps, but it must not cache
// Secrets: an informer on Secrets would hold every Secret of the cluster in
// memory and need list/watch permission on all of them.
type Reconciler struct {
	// Client is the manager's client: its reads come from the informer cache.
	Client client.Client
	// APIReader reads straight from the API server (mgr.GetAPIReader()).
	APIReader client.Reader
}

// Reconcile renders the signed message.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// Watched, so cached: a cache read costs the API server nothing.
	var greeting learnv1alpha1.Greeting
	if err := r.Client.Get(ctx, req.NamespacedName, &greeting); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	signature := ""
	if greeting.Spec.SecretRef != "" {
		// Not watched: a cached read would start a cluster-wide Secret
		// informer, so read this one object directly.
		var secret corev1.Secret
		key := types.NamespacedName{Namespace: greeting.Namespace, Name: greeting.Spec.SecretRef}
		if err := r.APIReader.Get(ctx, key, &secret); err != nil {
			return ctrl.Result{}, fmt.Errorf("read Secret %s: %w", key.Name, err)
		}
		signature = string(secret.Data[SignatureKey])
	}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName(&greeting), Namespace: greeting.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = map[string]string{"message": greeting.Spec.Message, SignatureKey: signature}
		return controllerutil.SetControllerReference(&greeting, cm, r.Client.Scheme())
	}); err != nil {
		return ctrl.Result{}, fmt.Errorf("ensure ConfigMap %s: %w", cm.Name, err)
	}
	return ctrl.Result{}, nil
}
