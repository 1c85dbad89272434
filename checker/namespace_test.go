package checker_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator-lab/lab/labs/checkkit/cluster"
)

// TestDeleteNamespaceLeavesNothing: the control plane has no namespace
// controller, so a check's namespace is emptied and finalized by lab —
// even an object whose finalizer nobody will ever remove goes.
func TestDeleteNamespaceLeavesNothing(t *testing.T) {
	t.Setenv("KUBECONFIG", kubeconfig(t))
	ctx := context.Background()
	cfg := cluster.Config(t)
	c := cluster.Client(t, cfg, clientgoscheme.Scheme)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cleanup-"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	held := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: ns.Name, Finalizers: []string{"example.com/never"}}}
	if err := c.Create(ctx, held); err != nil {
		t.Fatal(err)
	}

	if err := cluster.DeleteNamespace(ctx, cfg, ns.Name); err != nil {
		t.Fatalf("DeleteNamespace: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(held), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ConfigMap with a finalizer: %v, want it gone", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := c.Get(ctx, client.ObjectKeyFromObject(ns), &corev1.Namespace{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the namespace is still there 10s after DeleteNamespace: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := cluster.DeleteNamespace(ctx, cfg, ns.Name); err != nil {
		t.Errorf("DeleteNamespace of a namespace already gone: %v", err)
	}
}
