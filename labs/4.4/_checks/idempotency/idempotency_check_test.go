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
	newDB := func(prefix string) *learnv1alpha1.Database {
		db := &learnv1alpha1.Database{
			ObjectMeta: metav1.ObjectMeta{Name: checkkit.Name(prefix), Namespace: ns},
			Spec: learnv1alpha1.DatabaseSpec{Image: "postgres:17", Replicas: 1, DatabaseName: checkkit.Pick("payments", "ledger"),
				Username: checkkit.Name("app"), Storage: "1Gi"},
		}
		if err := direct.Create(ctx, db); err != nil {
			t.Fatalf("create Database: %v", err)
		}
		db.Status.Endpoint = db.Spec.DatabaseName + "." + db.Name + ".db.example:5432"
		return db
	}
	db := newDB("payments")
	c := observe.Client(obs.Bus, direct)
	name := idempotency.SecretName(db.Name)
	if name != db.Name+"-credentials" {
		checkkit.Expect(t, "SecretName %s (the reference operator's)", name, db.Name+"-credentials")
	}
	want := map[string]string{
		idempotency.SecretKeyUsername: db.Spec.Username, idempotency.SecretKeyDatabase: db.Spec.DatabaseName, idempotency.SecretKeyEndpoint: db.Status.Endpoint,
	}
	holds := func(s *corev1.Secret) error {
		for k, v := range want {
			if string(s.Data[k]) != v {
				return fmt.Errorf("%s = %q, want %q", k, s.Data[k], v)
			}
		}
		if len(s.Data[idempotency.SecretKeyPassword]) == 0 {
			return fmt.Errorf("no %s", idempotency.SecretKeyPassword)
		}
		return nil
	}
	var password string
	get := func(t *testing.T) *corev1.Secret {
		t.Helper()
		var s corev1.Secret
		if err := direct.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &s); err != nil {
			checkkit.Expect(t, "Secret %s to exist", err.Error(), name)
		}
		return &s
	}

	// Writes are counted by what the API server ends up with, not by the
	// client verb that made them (create, update, patch or apply): a new
	// object is a new UID, a write that changed something a new
	// resourceVersion.
	n := checkkit.Between(30, 60)
	t.Run(fmt.Sprintf("%d calls create it once", n), func(t *testing.T) {
		var first *corev1.Secret
		for i := 1; i <= n; i++ {
			if err := idempotency.EnsureSecret(ctx, c, db); err != nil {
				checkkit.Expect(t, "call %d of %d to succeed", fmt.Sprintf("error %q", err), i, n)
			}
			s := get(t)
			switch {
			case first == nil:
				first = s
			case s.UID != first.UID:
				checkkit.Expect(t, "1 Secret, created once", fmt.Sprintf("a new one (another UID) after call %d", i))
			case s.ResourceVersion != first.ResourceVersion:
				checkkit.Expect(t, "no writes while nothing drifted", fmt.Sprintf("the Secret changed (resourceVersion %s → %s) in call %d", first.ResourceVersion, s.ResourceVersion, i))
			}
		}
		s := get(t)
		if err := holds(s); err != nil {
			checkkit.Expect(t, "the Secret to hold the Database's credentials", err.Error())
		}
		password = string(s.Data[idempotency.SecretKeyPassword])
	})

	t.Run("owned by its Database", func(t *testing.T) {
		owner := metav1.GetControllerOf(get(t))
		if owner == nil || owner.UID != db.UID {
			checkkit.Expect(t, "the Database %s as controller owner", fmt.Sprintf("owner %v", owner), db.Name)
		}
	})

	t.Run("repairs drift with one update", func(t *testing.T) {
		s := get(t)
		s.Data[idempotency.SecretKeyUsername] = []byte("tampered")
		if err := direct.Update(ctx, s); err != nil {
			t.Fatal(err)
		}
		versions := []string{s.ResourceVersion}
		for range 5 {
			if err := idempotency.EnsureSecret(ctx, c, db); err != nil {
				checkkit.Expect(t, "EnsureSecret to succeed", err.Error())
			}
			if rv := get(t).ResourceVersion; rv != versions[len(versions)-1] {
				versions = append(versions, rv)
			}
		}
		if got := len(versions) - 1; got != 1 {
			checkkit.Expect(t, "1 write to repair the drift, then none", fmt.Sprintf("%d writes", got))
		}
		s = get(t)
		if err := holds(s); err != nil {
			checkkit.Expect(t, "the drifted username restored", err.Error())
		}
		if got := string(s.Data[idempotency.SecretKeyPassword]); got != password {
			checkkit.Expect(t, "the password generated once and kept", "a new password")
		}
	})

	t.Run("survives losing the create race", func(t *testing.T) {
		db2 := newDB("raced")
		raced := idempotency.SecretName(db2.Name)
		// Another writer created it a moment ago, with stale data...
		other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: raced, Namespace: ns}, Data: map[string][]byte{
			idempotency.SecretKeyUsername: []byte("old"), idempotency.SecretKeyPassword: []byte("kept"),
		}}
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
		if err := idempotency.EnsureSecret(ctx, stale, db2); err != nil {
			checkkit.Expect(t, "EnsureSecret to recover from AlreadyExists after a stale read", fmt.Sprintf("error %q", err))
		}
		var s corev1.Secret
		if err := direct.Get(ctx, types.NamespacedName{Namespace: ns, Name: raced}, &s); err != nil {
			t.Fatal(err)
		}
		if string(s.Data[idempotency.SecretKeyUsername]) != db2.Spec.Username || string(s.Data[idempotency.SecretKeyPassword]) != "kept" || metav1.GetControllerOf(&s) == nil {
			checkkit.Expect(t, "the raced Secret brought in line (username, owner) with its password kept",
				fmt.Sprintf("username %q, password %q, owner %v", s.Data[idempotency.SecretKeyUsername], s.Data[idempotency.SecretKeyPassword], metav1.GetControllerOf(&s)))
		}
	})
}
