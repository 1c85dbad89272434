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

// SignatureKey is the key of the Secret data that signs the message: the
// HelloWorld API's own ("signature"), which the reference operator writes
// to its ConfigMap too.
const SignatureKey = learnv1alpha1.SignatureKey

// ConfigMapName is the name of the ConfigMap that holds a HelloWorld's signed message.
func ConfigMapName(hello *learnv1alpha1.HelloWorld) string {
	return hello.Name + "-signed"
}

// Reconciler writes each HelloWorld's message, signed with the Secret named
// in spec.secretRef, into a ConfigMap it owns.
//
// This controller watches HelloWorlds and ConfigMaps, but it must not cache
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
	// TODO(lab): decide, for each read below, whether it should come from
	// the cache (Client) or the API server (APIReader).
	var hello learnv1alpha1.HelloWorld
	if err := r.APIReader.Get(ctx, req.NamespacedName, &hello); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	signature := ""
	if hello.Spec.SecretRef != "" {
		var secret corev1.Secret
		key := types.NamespacedName{Namespace: hello.Namespace, Name: hello.Spec.SecretRef}
		if err := r.Client.Get(ctx, key, &secret); err != nil {
			return ctrl.Result{}, fmt.Errorf("read Secret %s: %w", key.Name, err)
		}
		signature = string(secret.Data[SignatureKey])
	}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName(&hello), Namespace: hello.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = map[string]string{"message": hello.Spec.Message, SignatureKey: signature}
		return controllerutil.SetControllerReference(&hello, cm, r.Client.Scheme())
	}); err != nil {
		return ctrl.Result{}, fmt.Errorf("ensure ConfigMap %s: %w", cm.Name, err)
	}
	return ctrl.Result{}, nil
}
