package checker_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator-lab/lab/labs/checkkit/cluster"
)

// TestConfinedConfigWritesOnlyInItsNamespace: the config a check hands to a
// learner's own manager reads every namespace (so a check can see that it
// watches too much) but writes only in the check's namespace, so one
// exercise's code cannot change what a check running beside it sees; the
// client reads each refusal as the Forbidden RBAC would give.
func TestConfinedConfigWritesOnlyInItsNamespace(t *testing.T) {
	t.Setenv("KUBECONFIG", kubeconfig(t))
	ctx := context.Background()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cfg := cluster.Config(t)
	admin := cluster.Client(t, cfg, scheme)
	own, other := cluster.Namespace(t, admin), cluster.Namespace(t, admin)
	learner := cluster.Client(t, cluster.ConfinedConfig(cfg, own), scheme)

	configMap := func(ns string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns}}
	}
	if err := admin.Create(ctx, configMap(other)); err != nil {
		t.Fatal(err)
	}
	if err := learner.Create(ctx, configMap(own)); err != nil {
		t.Errorf("create in its own namespace: %v", err)
	}
	var list corev1.ConfigMapList
	if err := learner.List(ctx, &list); err != nil {
		t.Errorf("list in every namespace: %v", err)
	}
	if err := learner.Get(ctx, client.ObjectKeyFromObject(configMap(other)), &corev1.ConfigMap{}); err != nil {
		t.Errorf("get in another namespace: %v", err)
	}
	for what, err := range map[string]error{
		"create in another namespace": learner.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "written", Namespace: other}}),
		"update in another namespace": learner.Update(ctx, configMap(other)),
		"delete in another namespace": learner.Delete(ctx, configMap(other)),
		"delete its own namespace":    learner.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: own}}),
	} {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s: %v, want Forbidden", what, err)
		}
	}
}
