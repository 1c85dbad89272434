package observe

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

type clientCall struct{ verb, object, name, source, outcome string }

func clientCalls(events []Event) []clientCall {
	var out []clientCall
	for _, e := range events {
		if e.Kind == KindClient {
			out = append(out, clientCall{e.Verb, e.Object, e.Name, e.Source, e.Outcome})
		}
	}
	return out
}

// Narrow unit test with the fake client: it produces the API errors the
// outcomes are derived from. The envtest test covers a real API server.
func TestClientReportsVerbsAndOutcomes(t *testing.T) {
	b := NewBus()
	rec := NewRecorder(b)
	ctx := WithScope(context.Background(), Scope{Controller: "db", Key: "ns/owner", ReconcileID: "r1"})
	base := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithStatusSubresource(&corev1.Pod{}).Build()
	c := Client(b, base)

	var cm corev1.ConfigMap
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_ = c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "cfg"}, &cm)
	cm = corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg"}}
	must(c.Create(ctx, &cm))
	dup := corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg"}}
	_ = c.Create(ctx, &dup)
	stale := cm.DeepCopy()
	cm.Data = map[string]string{"k": "v"}
	must(c.Update(ctx, &cm))
	stale.Data = map[string]string{"k": "old"}
	_ = c.Update(ctx, stale)
	must(c.Patch(ctx, &cm, client.MergeFrom(cm.DeepCopy())))
	var list corev1.ConfigMapList
	must(c.List(ctx, &list, client.InNamespace("ns")))
	pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	must(c.Create(ctx, &pod))
	pod.Status.Phase = corev1.PodRunning
	must(c.Status().Update(ctx, &pod))
	must(c.Status().Patch(ctx, &pod, client.MergeFrom(pod.DeepCopy())))
	must(c.Delete(ctx, &cm))
	must(c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace("ns")))
	u := &unstructured.UnstructuredList{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMapList"})
	must(c.List(ctx, u))

	assertSequence(t, "client events", clientCalls(rec.Events()), []clientCall{
		{"get", "ConfigMap", "cfg", SourceCache, OutcomeNotFound},
		{"create", "ConfigMap", "cfg", SourceAPI, OutcomeOK},
		{"create", "ConfigMap", "cfg", SourceAPI, OutcomeAlreadyExists},
		{"update", "ConfigMap", "cfg", SourceAPI, OutcomeOK},
		{"update", "ConfigMap", "cfg", SourceAPI, OutcomeConflict},
		{"patch", "ConfigMap", "cfg", SourceAPI, OutcomeOK},
		{"list", "ConfigMap", "", SourceCache, OutcomeOK},
		{"create", "Pod", "p", SourceAPI, OutcomeOK},
		{"status.update", "Pod", "p", SourceAPI, OutcomeOK},
		{"status.patch", "Pod", "p", SourceAPI, OutcomeOK},
		{"delete", "ConfigMap", "cfg", SourceAPI, OutcomeOK},
		{"deleteallof", "Pod", "", SourceAPI, OutcomeOK},
		{"list", "ConfigMap", "", SourceCache, OutcomeOK},
	})
	for _, e := range rec.Events() {
		if e.Controller != "db" || e.Key != "ns/owner" || e.ReconcileID != "r1" {
			t.Fatalf("client event not tied to the reconcile: %+v", e)
		}
		if (e.Outcome == OutcomeOK) != (e.Error == "") {
			t.Errorf("error text does not match outcome: %+v", e)
		}
	}
}

func TestClientOtherErrorsAndReader(t *testing.T) {
	b := NewBus()
	rec := NewRecorder(b)
	broken := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errors.New("connection refused")
		},
	}).Build()
	var cm corev1.ConfigMap
	err := Client(b, broken).Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "x"}, &cm)
	if err == nil || err.Error() != "connection refused" {
		t.Fatalf("wrapper changed the error: %v", err)
	}

	r := Reader(b, fake.NewClientBuilder().WithObjects(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"}}).Build())
	var secret corev1.Secret
	if err := r.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "s"}, &secret); err != nil {
		t.Fatal(err)
	}
	var secrets corev1.SecretList
	if err := r.List(context.Background(), &secrets); err != nil {
		t.Fatal(err)
	}
	assertSequence(t, "client events", clientCalls(rec.Events()), []clientCall{
		{"get", "ConfigMap", "x", SourceCache, OutcomeError},
		{"get", "Secret", "s", SourceAPI, OutcomeOK},
		{"list", "Secret", "", SourceAPI, OutcomeOK},
	})
	if got := rec.Events()[0].Error; got != "connection refused" {
		t.Errorf("error text = %q", got)
	}
}
