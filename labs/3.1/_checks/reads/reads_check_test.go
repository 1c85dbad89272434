package reads_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
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
		end := firstEnd(t, obs, key)
		if end.Result != observe.ResultSuccess {
			checkkit.Expect(t, "the first reconcile of HelloWorld %s, whose Secret exists, to succeed", end.Brief(), key)
		}
		cmKey := types.NamespacedName{Namespace: ns, Name: reads.ConfigMapName(hello)}
		var cm corev1.ConfigMap
		if err := c.Get(ctx, cmKey, &cm); err != nil {
			checkkit.Expect(t, "ConfigMap %s written by the reconcile", fmt.Sprintf("no ConfigMap (%v)", err), cmKey)
		}
		got := cm.Data[reads.SignatureKey]
		switch {
		case cm.Data["message"] != hello.Spec.Message:
			checkkit.Expect(t, "ConfigMap %s to hold the message %q", fmt.Sprintf("data %v", cm.Data), cmKey, hello.Spec.Message)
		case got == signature:
		case got == "":
			checkkit.Expect(t, "ConfigMap %s to hold the signature %q, the Secret's Data[%q]", "no signature "+
				"(a Secret read back has its values in Data: StringData is only for writing, and reads back empty)", cmKey, signature, reads.SignatureKey)
		case got == base64.StdEncoding.EncodeToString([]byte(signature)):
			checkkit.Expect(t, "ConfigMap %s to hold the signature %q, the Secret's Data[%q]", fmt.Sprintf("%q, the signature base64-encoded: "+
				"Secret.Data holds the decoded bytes already", got), cmKey, signature, reads.SignatureKey)
		default:
			checkkit.Expect(t, "ConfigMap %s to hold the signature %q, the Secret's Data[%q]", fmt.Sprintf("%q", got), cmKey, signature, reads.SignatureKey)
		}
	})

	// The reads of every reconcile of this HelloWorld so far, and those made
	// outside any reconcile's context (context.Background()): every read of
	// the client and the reader the check hands the reconciler is the
	// learner's.
	var fromCache, fromAPI = map[string][]observe.Event{}, map[string][]observe.Event{}
	for _, e := range cluster.OfKind(obs.Events(), observe.KindClient) {
		if e.Verb != "get" && e.Verb != "list" || e.Key != key && e.Key != "" {
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
				fmt.Sprintf("%d read(s) from the API server: %s", n, describeReads(fromAPI["HelloWorld"])))
		}
		if len(fromCache["HelloWorld"]) == 0 {
			checkkit.Expect(t, "the HelloWorld read through Client", "no such read")
		}
	})

	t.Run("reads the owned ConfigMap from the cache", func(t *testing.T) {
		if n := len(fromAPI["ConfigMap"]); n > 0 {
			checkkit.Expect(t, "ConfigMap reads from the cache (Client): the ConfigMaps it owns are watched, so the cache has them",
				fmt.Sprintf("%d read(s) from the API server: %s", n, describeReads(fromAPI["ConfigMap"])))
		}
	})

	t.Run("reads the unwatched Secret from the API server", func(t *testing.T) {
		if n := len(fromCache["Secret"]); n > 0 {
			checkkit.Expect(t, "the Secret read through APIReader",
				fmt.Sprintf("%s: a cached read starts an informer on every Secret in the cluster", describeReads(fromCache["Secret"][:1])))
		}
		if len(fromAPI["Secret"]) == 0 {
			checkkit.Expect(t, "the Secret %s read through APIReader", "no such read", secret.Name)
		}
	})

	t.Run("a missing Secret is retried until it exists", func(t *testing.T) {
		late := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: checkkit.Name("late"), Namespace: ns},
			Data:       map[string][]byte{reads.SignatureKey: []byte(checkkit.Name("-- later"))},
		}
		waiting := &learnv1alpha1.HelloWorld{
			ObjectMeta: metav1.ObjectMeta{Name: checkkit.Name("waiting"), Namespace: ns},
			Spec:       learnv1alpha1.HelloWorldSpec{Message: checkkit.Name("hello"), SecretRef: late.Name},
		}
		if err := c.Create(ctx, waiting); err != nil {
			t.Fatalf("create HelloWorld: %v", err)
		}
		waitingKey := ns + "/" + waiting.Name
		// An error or a RequeueAfter both bring the reconcile back; the
		// retry below says whether it comes back soon enough.
		if end := firstEnd(t, obs, waitingKey); end.Result != observe.ResultError && end.Result != observe.ResultRequeueAfter {
			checkkit.Expect(t, "Reconcile of HelloWorld %s, whose Secret %s does not exist yet, to return the error (or a RequeueAfter): "+
				"Secrets are not watched, so only the controller's retries will see it once it is created", end.Brief(), waitingKey, late.Name)
		}
		cmKey := types.NamespacedName{Namespace: ns, Name: reads.ConfigMapName(waiting)}
		var unsigned corev1.ConfigMap
		if err := c.Get(ctx, cmKey, &unsigned); err == nil {
			checkkit.Expect(t, "no ConfigMap for HelloWorld %s while its Secret is missing", fmt.Sprintf("ConfigMap %s with data %v", cmKey, unsigned.Data), waitingKey)
		}
		before := len(obs.Events())
		if err := c.Create(ctx, late); err != nil {
			t.Fatalf("create Secret: %v", err)
		}
		// The retries after the error find it: wait for one that succeeds.
		after := func(events []observe.Event) []observe.Event {
			return cluster.OfKind(cluster.ForKey(events[before:], waitingKey), observe.KindReconcileEnd)
		}
		obs.WaitFor(t, fmt.Sprintf("a retry of HelloWorld %s to succeed once its Secret exists", waitingKey), func(events []observe.Event) bool {
			return slices.ContainsFunc(after(events), func(e observe.Event) bool { return e.Result == observe.ResultSuccess })
		}, func(events []observe.Event) string { return cluster.Describe(after(events)) })
		var cm corev1.ConfigMap
		if err := c.Get(ctx, cmKey, &cm); err != nil {
			checkkit.Expect(t, "ConfigMap %s written once the Secret exists", fmt.Sprintf("no ConfigMap (%v)", err), cmKey)
		}
		if want, got := string(late.Data[reads.SignatureKey]), cm.Data[reads.SignatureKey]; got != want {
			checkkit.Expect(t, "ConfigMap %s signed %q once the Secret exists", fmt.Sprintf("signature %q", got), cmKey, want)
		}
	})
}

// firstEnd waits for the end of the first reconcile of key and returns it.
func firstEnd(t *testing.T, obs *cluster.Observer, key string) observe.Event {
	t.Helper()
	events := obs.WaitFor(t, "a finished reconcile of "+key, func(events []observe.Event) bool {
		return len(cluster.OfKind(cluster.ForKey(events, key), observe.KindReconcileEnd)) > 0
	}, func(events []observe.Event) string { return cluster.Describe(cluster.ForKey(events, key)) })
	return cluster.OfKind(cluster.ForKey(events, key), observe.KindReconcileEnd)[0]
}

// describeReads renders client events like cluster.Describe, marking those
// made outside the reconcile's context.
func describeReads(events []observe.Event) string {
	parts := make([]string, 0, len(events))
	for _, e := range events {
		d := cluster.Describe([]observe.Event{e})
		if e.Key == "" {
			d += " (with a context not Reconcile's own)"
		}
		parts = append(parts, d)
	}
	return strings.Join(parts, ", ")
}
