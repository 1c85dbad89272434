package idempotency_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/operator-lab/lab/labs/checkkit"
	"github.com/operator-lab/lab/labs/checkkit/cluster"
	"github.com/operator-lab/lab/observe"

	learnv1alpha1 "example.com/lab44/api/v1alpha1"
	"example.com/lab44/idempotency"
)

func TestEnsureSecret(t *testing.T) {
	ctx := context.Background()
	obs := cluster.Observe(t)
	cfg := cluster.Config(t)
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = learnv1alpha1.AddToScheme(scheme)
	direct := cluster.Client(t, cfg, scheme)
	ns := cluster.Namespace(t, direct)
	db := &learnv1alpha1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: checkkit.Name("payments"), Namespace: ns},
		Spec:       learnv1alpha1.DatabaseSpec{Engine: "postgres"},
	}
	if err := direct.Create(ctx, db); err != nil {
		t.Fatalf("create Database: %v", err)
	}
	c := observe.Client(obs.Bus, direct)
	name := checkkit.Name(db.Name + "-credentials")
	data := map[string][]byte{"username": []byte(checkkit.Name("app")), "password": []byte(checkkit.Name("s3cret"))}
	writes := func(verb string) int {
		n := 0
		for _, e := range cluster.OfKind(obs.Events(), observe.KindClient) {
			if e.Verb == verb && e.Object == "Secret" && e.Outcome == observe.OutcomeOK {
				n++
			}
		}
		return n
	}
	get := func() *corev1.Secret {
		var s corev1.Secret
		if err := direct.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &s); err != nil {
			checkkit.Expect(t, "Secret %s to exist", err.Error(), name)
		}
		return &s
	}

	n := checkkit.Between(30, 60)
	t.Run(fmt.Sprintf("%d calls create it once", n), func(t *testing.T) {
		for i := 1; i <= n; i++ {
			if err := idempotency.EnsureSecret(ctx, c, db, name, data); err != nil {
				checkkit.Expect(t, "call %d of %d to succeed", fmt.Sprintf("error %q", err), i, n)
			}
		}
		if got := writes("create"); got != 1 {
			checkkit.Expect(t, "1 create", fmt.Sprintf("%d", got))
		}
		if got := writes("update") + writes("patch"); got != 0 {
			checkkit.Expect(t, "no updates while nothing drifted", fmt.Sprintf("%d", got))
		}
		if s := get(); string(s.Data["password"]) != string(data["password"]) {
			checkkit.Expect(t, "the Secret to hold the data", fmt.Sprintf("%v", s.Data))
		}
	})

	t.Run("owned by its Database", func(t *testing.T) {
		owner := metav1.GetControllerOf(get())
		if owner == nil || owner.UID != db.UID {
			checkkit.Expect(t, "the Database %s as controller owner", fmt.Sprintf("owner %v", owner), db.Name)
		}
	})

	t.Run("repairs drift with one update", func(t *testing.T) {
		s := get()
		s.Data["password"] = []byte("tampered")
		if err := direct.Update(ctx, s); err != nil {
			t.Fatal(err)
		}
		before := writes("update") + writes("patch")
		for range 5 {
			if err := idempotency.EnsureSecret(ctx, c, db, name, data); err != nil {
				checkkit.Expect(t, "EnsureSecret to succeed", err.Error())
			}
		}
		if got := writes("update") + writes("patch") - before; got != 1 {
			checkkit.Expect(t, "1 update to repair the drift, then none", fmt.Sprintf("%d", got))
		}
		if s := get(); string(s.Data["password"]) != string(data["password"]) {
			checkkit.Expect(t, "the drifted password restored", string(s.Data["password"]))
		}
	})

	t.Run("survives losing the create race", func(t *testing.T) {
		raced := checkkit.Name(db.Name + "-raced")
		// Another worker created it a moment ago, with stale data...
		other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: raced, Namespace: ns}, Data: map[string][]byte{"password": []byte("old")}}
		if err := direct.Create(ctx, other); err != nil {
			t.Fatal(err)
		}
		// ...and this worker's cache has not seen it yet: its first read says NotFound.
		var staleReads atomic.Int32
		watching, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
		if err != nil {
			t.Fatal(err)
		}
		stale := interceptor.NewClient(watching, interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if _, ok := obj.(*corev1.Secret); ok && key.Name == raced && staleReads.Add(1) == 1 {
					return apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, key.Name)
				}
				return c.Get(ctx, key, obj, opts...)
			},
		})
		if err := idempotency.EnsureSecret(ctx, stale, db, raced, data); err != nil {
			checkkit.Expect(t, "EnsureSecret to recover from AlreadyExists after a stale read", fmt.Sprintf("error %q", err))
		}
		var s corev1.Secret
		if err := direct.Get(ctx, types.NamespacedName{Namespace: ns, Name: raced}, &s); err != nil {
			t.Fatal(err)
		}
		if string(s.Data["password"]) != string(data["password"]) || metav1.GetControllerOf(&s) == nil {
			checkkit.Expect(t, "the raced Secret brought in line (data and owner)", fmt.Sprintf("password %q, owner %v", s.Data["password"], metav1.GetControllerOf(&s)))
		}
	})
}
