package reads_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/operator-lab/lab/labs/checkkit"
	"github.com/operator-lab/lab/labs/checkkit/cluster"
	"github.com/operator-lab/lab/observe"

	learnv1alpha1 "example.com/lab31/api/v1alpha1"
	"example.com/lab31/reads"
)

func TestCacheVersusAPIReads(t *testing.T) {
	ctx := context.Background()
	obs := cluster.Observe(t)
	cfg := cluster.Config(t)
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = learnv1alpha1.AddToScheme(scheme)
	c := cluster.Client(t, cfg, scheme)
	ns := cluster.Namespace(t, c)
	cluster.StartManager(t, cfg, scheme, ns, func(mgr ctrl.Manager) error {
		r := &reads.Reconciler{
			Client:    observe.Client(obs.Bus, mgr.GetClient()),
			APIReader: observe.Reader(obs.Bus, mgr.GetAPIReader()),
		}
		return ctrl.NewControllerManagedBy(mgr).
			Named("helloworld").
			For(&learnv1alpha1.HelloWorld{}).
			Owns(&corev1.ConfigMap{}).
			WithOptions(obs.QueueOptions()).
			Complete(observe.Reconciler(obs.Bus, "helloworld", nil, r))
	})

	signature := checkkit.Name(checkkit.Pick("-- ada", "-- linus", "-- grace"))
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: checkkit.Name("signing"), Namespace: ns},
		Data:       map[string][]byte{reads.SignatureKey: []byte(signature)},
	}
	if err := c.Create(ctx, secret); err != nil {
		t.Fatalf("create Secret: %v", err)
	}
	hello := &learnv1alpha1.HelloWorld{
		ObjectMeta: metav1.ObjectMeta{Name: checkkit.Name("signed"), Namespace: ns},
		Spec:       learnv1alpha1.HelloWorldSpec{Message: checkkit.Name("hello"), SecretRef: secret.Name},
	}
	if err := c.Create(ctx, hello); err != nil {
		t.Fatalf("create HelloWorld: %v", err)
	}
	key := ns + "/" + hello.Name

	t.Run("writes the signed message", func(t *testing.T) {
		cmKey := types.NamespacedName{Namespace: ns, Name: reads.ConfigMapName(hello)}
		checkkit.Eventually(t, fmt.Sprintf("ConfigMap %s with the message and signature %q", cmKey, signature), func() error {
			var cm corev1.ConfigMap
			if err := c.Get(ctx, cmKey, &cm); err != nil {
				return fmt.Errorf("no ConfigMap (%v)", err)
			}
			if cm.Data["message"] != hello.Spec.Message || cm.Data[reads.SignatureKey] != signature {
				return fmt.Errorf("data %v", cm.Data)
			}
			return nil
		})
	})

	// The reads of every reconcile of this HelloWorld so far.
	obs.WaitFor(t, "a finished reconcile of "+key, func(events []observe.Event) bool {
		return len(cluster.OfKind(cluster.ForKey(events, key), observe.KindReconcileEnd)) > 0
	}, func(events []observe.Event) string { return cluster.Describe(cluster.ForKey(events, key)) })
	var fromCache, fromAPI = map[string][]observe.Event{}, map[string][]observe.Event{}
	for _, e := range cluster.OfKind(cluster.ForKey(obs.Events(), key), observe.KindClient) {
		if e.Verb != "get" && e.Verb != "list" {
			continue
		}
		if e.Source == observe.SourceAPI {
			fromAPI[e.Object] = append(fromAPI[e.Object], e)
		} else {
			fromCache[e.Object] = append(fromCache[e.Object], e)
		}
	}

	t.Run("reads the watched HelloWorld from the cache", func(t *testing.T) {
		if n := len(fromAPI["HelloWorld"]); n > 0 {
			checkkit.Expect(t, "HelloWorld reads from the cache (Client): it is watched, so the cache has it",
				fmt.Sprintf("%d read(s) from the API server: %s", n, cluster.Describe(fromAPI["HelloWorld"])))
		}
		if len(fromCache["HelloWorld"]) == 0 {
			checkkit.Expect(t, "the HelloWorld read through Client", "no such read")
		}
		if n := len(fromAPI["ConfigMap"]); n > 0 {
			checkkit.Expect(t, "ConfigMap reads from the cache (Client): owned ConfigMaps are watched",
				fmt.Sprintf("%d read(s) from the API server", n))
		}
	})

	t.Run("reads the unwatched Secret from the API server", func(t *testing.T) {
		if n := len(fromCache["Secret"]); n > 0 {
			checkkit.Expect(t, "the Secret read through APIReader",
				fmt.Sprintf("%s: a cached read starts an informer on every Secret in the cluster", cluster.Describe(fromCache["Secret"][:1])))
		}
		if len(fromAPI["Secret"]) == 0 {
			checkkit.Expect(t, "the Secret %s read through APIReader", "no such read", secret.Name)
		}
	})
}
