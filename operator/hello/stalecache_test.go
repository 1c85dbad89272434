package hello_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/operator-lab/lab/operator/api/v1alpha1"
	"github.com/operator-lab/lab/operator/hello"
	"github.com/operator-lab/lab/operator/scheme"
	"github.com/operator-lab/lab/operator/switches"
)

type healthy struct{}

func (healthy) HealthCheck(context.Context) error { return nil }

// TestStaleCacheIsNoError: when the cache has not yet seen the ConfigMap an
// earlier reconcile created (the create answers AlreadyExists), the
// reconcile ends without an error; the ConfigMap's watch event queues the
// HelloWorld again.
func TestStaleCacheIsNoError(t *testing.T) {
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	hw := &v1alpha1.HelloWorld{ObjectMeta: metav1.ObjectMeta{Name: "hw", Namespace: "ns"},
		Spec: v1alpha1.HelloWorldSpec{Message: "hi", Count: 1}}
	creates := 0
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(hw).WithStatusSubresource(hw).
		WithInterceptorFuncs(interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok {
				creates++
				return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "configmaps"}, obj.GetName())
			}
			return c.Create(ctx, obj, opts...)
		}}).Build()
	r := &hello.Reconciler{Client: c, APIReader: c, Scheme: s, Switches: switches.New(nil), Dependency: healthy{}}
	res, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(hw)})
	if err != nil || res != (reconcile.Result{}) || creates != 1 {
		t.Fatalf("Reconcile = %+v, %v after %d creates; want no error, no requeue, one create", res, err, creates)
	}
}
