package scenario_test

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator"
	"github.com/operator-lab/lab/operator/api/v1alpha1"
	"github.com/operator-lab/lab/operator/hello"
	"github.com/operator-lab/lab/operator/internal/optest"
	"github.com/operator-lab/lab/operator/scenario"
	"github.com/operator-lab/lab/operator/scheme"
)

// steps records the scenario events a ClientObjects announces.
type steps struct {
	mu  sync.Mutex
	got []observe.ScenarioStep
}

func (s *steps) Emit(e observe.Event) {
	if e.Kind == observe.KindScenario {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.got = append(s.got, e.ScenarioStep())
	}
}

// TestHelloSamplesCreateTheirSecretOnceAndFirst: the 3.1 samples name a
// Secret in spec.secretRef; the first Create makes it (announced, before
// the HelloWorld), later ones do not, and it holds the signature key.
func TestHelloSamplesCreateTheirSecretOnceAndFirst(t *testing.T) {
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).Build()
	em := &steps{}
	objects := scenario.NewClientObjects(c, "ns", scenario.Reference(operator.Lab31), em, "you")
	ctx := context.Background()
	for range 2 {
		if _, err := objects.Create(ctx, "", false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := objects.Create(ctx, "", true); err != nil {
		t.Fatal(err)
	}

	var hws v1alpha1.HelloWorldList
	if err := c.List(ctx, &hws, client.InNamespace("ns")); err != nil {
		t.Fatal(err)
	}
	if len(hws.Items) != 3 {
		t.Fatalf("%d HelloWorlds, want 3", len(hws.Items))
	}
	ref := hws.Items[0].Spec.SecretRef
	for _, hw := range hws.Items {
		if hw.Spec.SecretRef == "" || hw.Spec.SecretRef != ref {
			t.Errorf("%s: spec.secretRef = %q, want every sample to name the one Secret", hw.Name, hw.Spec.SecretRef)
		}
	}
	var secret corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: ref}, &secret); err != nil {
		t.Fatalf("the Secret the samples name: %v", err)
	}
	if len(secret.Data[v1alpha1.SignatureKey]) == 0 {
		t.Errorf("Secret %s has no %s key: %v", ref, v1alpha1.SignatureKey, secret.Data)
	}

	var keys []string
	for _, st := range em.got {
		if st.Step == "create" {
			keys = append(keys, st.Key)
		}
	}
	want := []string{"ns/" + ref, "ns/hello", "ns/hello-2", "ns/hello-3"}
	if len(keys) != len(want) {
		t.Fatalf("creates announced: %v, want %v", keys, want)
	}
	for i := range want {
		if keys[i] != want[i] {
			t.Fatalf("creates announced: %v, want %v", keys, want)
		}
	}
}

// TestDefaultHelloScenarioReadsTheSecretFromTheAPIServer runs lab run 3.1's
// default scenario (create) on the reference operator and checks what the
// lesson's "cache vs API reads" says lab start 3.1 shows: in every
// reconcile of the sample that gets that far, the HelloWorld and its
// ConfigMap are read from the cache, the Secret its spec.secretRef names
// from the API server, and the ConfigMap ends up carrying the signature.
func TestDefaultHelloScenarioReadsTheSecretFromTheAPIServer(t *testing.T) {
	t.Parallel()
	s, err := scenario.Get(operator.Lab31, "create")
	if err != nil {
		t.Fatal(err)
	}
	env := optest.Start(t, optest.Options{Lab: operator.Lab31})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.Run(ctx, scenario.Env{Client: env.Client, Namespace: env.Namespace, Switches: env.Switches, Emitter: env.Bus}); err != nil {
		t.Fatalf("run: %v\n%s", err, optest.Dump(env.Recorder.Events()))
	}
	events := env.Recorder.Events()
	key := env.Namespace + "/" + scenario.Reference(operator.Lab31).Name()

	// Per reconcile of the sample: which kinds it read, from where.
	reads := map[string]map[string]int{}
	var order []string
	for _, e := range events {
		if e.Kind != observe.KindClient || e.Verb != "get" || e.Key != key {
			continue
		}
		if reads[e.ReconcileID] == nil {
			reads[e.ReconcileID] = map[string]int{}
			order = append(order, e.ReconcileID)
		}
		reads[e.ReconcileID][e.Object+" from="+e.Source]++
	}
	if len(order) == 0 {
		t.Fatalf("no reads by the reconciles of %s\n%s", key, optest.Dump(events))
	}
	for _, id := range order {
		r := reads[id]
		if r["HelloWorld from="+observe.SourceCache] != 1 || r["Secret from="+observe.SourceAPI] != 1 ||
			r["ConfigMap from="+observe.SourceCache] != 1 || len(r) != 3 {
			t.Errorf("reconcile %s reads %v, want one each of HelloWorld from=cache, Secret from=api, ConfigMap from=cache", id, r)
		}
	}
	for _, e := range events {
		// A status write from a copy the cache had not updated yet is
		// refused with a Conflict, which the controller returns.
		if e.Kind == observe.KindReconcileEnd && e.Key == key && e.Result != observe.ResultSuccess && !optest.StatusConflict(events, e) {
			t.Errorf("a reconcile of %s ended in %s: %s", key, e.Result, e.Error)
		}
	}

	hw := &v1alpha1.HelloWorld{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: scenario.Reference(operator.Lab31).Name()}, hw); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: hw.Spec.SecretRef}, secret); err != nil {
		t.Fatalf("the Secret spec.secretRef %q names: %v", hw.Spec.SecretRef, err)
	}
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: hello.ConfigMapName(hw.Name)}, cm); err != nil {
		t.Fatal(err)
	}
	want := string(secret.Data[v1alpha1.SignatureKey])
	if want == "" || cm.Data[v1alpha1.SignatureKey] != want {
		t.Errorf("ConfigMap %s: %s = %q, want the Secret's %q", cm.Name, v1alpha1.SignatureKey, cm.Data[v1alpha1.SignatureKey], want)
	}
	if t.Failed() {
		t.Logf("events:\n%s", optest.Dump(events))
	}
}
