package database_test

import (
	"context"
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/operator-lab/lab/operator/api/v1alpha1"
	"github.com/operator-lab/lab/operator/database"
	"github.com/operator-lab/lab/operator/scheme"
	"github.com/operator-lab/lab/operator/switches"
)

// TestStaleCacheIsNoError: a reconcile that reads from a cache which has
// not yet seen the StatefulSet an earlier reconcile created (the create
// answers AlreadyExists) ends without an error and stays in its phase:
// the StatefulSet's own watch event queues the Database again. Any other
// error of the create is the reconcile's error.
func TestStaleCacheIsNoError(t *testing.T) {
	for _, tc := range []struct {
		name    string
		created error
		wantErr bool
	}{
		{"already exists", apierrors.NewAlreadyExists(schema.GroupResource{Group: "apps", Resource: "statefulsets"}, "db"), false},
		{"forbidden", apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "statefulsets"}, "db", errors.New("no")), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := scheme.New()
			if err != nil {
				t.Fatal(err)
			}
			db := &v1alpha1.Database{
				ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", Finalizers: []string{v1alpha1.DatabaseFinalizer}},
				Spec:       v1alpha1.DatabaseSpec{DatabaseName: "app", Storage: "1Gi"},
				Status:     v1alpha1.DatabaseStatus{Phase: v1alpha1.PhaseDeploying},
			}
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(db).WithStatusSubresource(db).
				WithInterceptorFuncs(interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					if _, ok := obj.(*appsv1.StatefulSet); ok {
						return tc.created
					}
					return c.Create(ctx, obj, opts...)
				}}).Build()
			r := database.New(database.Options{Client: c, Scheme: s, Switches: switches.New(nil)})
			res, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(db)})
			if (err != nil) != tc.wantErr {
				t.Fatalf("Reconcile = %+v, %v; want an error: %v", res, err, tc.wantErr)
			}
			if res != (reconcile.Result{}) && !tc.wantErr {
				t.Errorf("Reconcile = %+v, want no requeue: the watch event brings the Database back", res)
			}
			got := &v1alpha1.Database{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(db), got); err != nil {
				t.Fatal(err)
			}
			if got.Status.Phase != v1alpha1.PhaseDeploying {
				t.Errorf("phase %s, want it to stay Deploying", got.Status.Phase)
			}
		})
	}
}
