package operator_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator"
	"github.com/operator-lab/lab/operator/api/v1alpha1"
	"github.com/operator-lab/lab/operator/hello"
	"github.com/operator-lab/lab/operator/internal/optest"
	"github.com/operator-lab/lab/operator/world"
)

func TestHelloWorldKeepsItsConfigMapInSync(t *testing.T) {
	t.Parallel()
	env := optest.Start(t, optest.Options{Lab: operator.Lab31})
	ctx := context.Background()
	hw := &v1alpha1.HelloWorld{
		ObjectMeta: metav1.ObjectMeta{Name: "greeter", Namespace: env.Namespace},
		Spec:       v1alpha1.HelloWorldSpec{Message: "hello", Count: 2},
	}
	if err := env.Client.Create(ctx, hw); err != nil {
		t.Fatal(err)
	}
	key := env.Namespace + "/greeter"
	readyFor := func(gen int64) func([]observe.Event) bool {
		return func([]observe.Event) bool {
			got := &v1alpha1.HelloWorld{}
			if err := env.Client.Get(ctx, clientKey(env.Namespace, "greeter"), got); err != nil {
				return false
			}
			c := findCondition(got.Status.Conditions, v1alpha1.ConditionReady)
			return c != nil && c.Status == metav1.ConditionTrue && got.Status.ObservedGeneration == gen && c.ObservedGeneration == gen
		}
	}
	env.WaitFor(t, waitLong, "Ready for generation 1", readyFor(1))

	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, clientKey(env.Namespace, hello.ConfigMapName("greeter")), cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["greeting"] != "hello\nhello" || cm.Data["message"] != "hello" {
		t.Errorf("ConfigMap data = %v", cm.Data)
	}
	owner := metav1.GetControllerOf(cm)
	if owner == nil || owner.Kind != "HelloWorld" || owner.Name != "greeter" {
		t.Errorf("ConfigMap controller owner = %+v", owner)
	}

	update(t, env, hw, func(h *v1alpha1.HelloWorld) { h.Spec.Message = "bonjour"; h.Spec.Count = 1 })
	env.WaitFor(t, waitLong, "Ready for generation 2", readyFor(2))
	if err := env.Client.Get(ctx, clientKey(env.Namespace, hello.ConfigMapName("greeter")), cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["greeting"] != "bonjour" {
		t.Errorf("after the update, greeting = %q", cm.Data["greeting"])
	}
	events := env.Recorder.Events()
	creates := 0
	for _, e := range events {
		if e.Kind == observe.KindClient && e.Verb == "create" && e.Object == "ConfigMap" {
			creates++
		}
	}
	if creates != 1 {
		t.Errorf("ConfigMap creates = %d, want 1\n%s", creates, optest.Dump(events))
	}
	// Only a status write from an outdated copy may fail (a Conflict,
	// returned and retried).
	for _, e := range events {
		if e.Kind == observe.KindReconcileEnd && e.Key == key && e.Result == observe.ResultError && !optest.StatusConflict(events, e) {
			t.Errorf("a reconcile failed: %s\n%s", e.Error, optest.Dump(events))
		}
	}
}

// TestHelloWorldSignatureIsReadFromTheAPIServer: the Secret spec.secretRef
// names is read through the APIReader (source "api"), the HelloWorld and its
// ConfigMap through the cache, and the signature lands in the ConfigMap — the
// lesson's "cache vs API reads", as the live view shows it.
func TestHelloWorldSignatureIsReadFromTheAPIServer(t *testing.T) {
	t.Parallel()
	env := optest.Start(t, optest.Options{Lab: operator.Lab31})
	ctx := context.Background()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "signing", Namespace: env.Namespace},
		Data:       map[string][]byte{v1alpha1.SignatureKey: []byte("-- ada")},
	}
	if err := env.Client.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	hw := &v1alpha1.HelloWorld{
		ObjectMeta: metav1.ObjectMeta{Name: "signed", Namespace: env.Namespace},
		Spec:       v1alpha1.HelloWorldSpec{Message: "hello", Count: 1, SecretRef: secret.Name},
	}
	if err := env.Client.Create(ctx, hw); err != nil {
		t.Fatal(err)
	}
	events := env.WaitFor(t, waitLong, "Ready", func([]observe.Event) bool {
		got := &v1alpha1.HelloWorld{}
		if err := env.Client.Get(ctx, clientKey(env.Namespace, "signed"), got); err != nil {
			return false
		}
		c := findCondition(got.Status.Conditions, v1alpha1.ConditionReady)
		return c != nil && c.Status == metav1.ConditionTrue
	})
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, clientKey(env.Namespace, hello.ConfigMapName("signed")), cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data[v1alpha1.SignatureKey] != "-- ada" || cm.Data["message"] != "hello" {
		t.Errorf("ConfigMap data = %v", cm.Data)
	}
	reads := map[string]int{}
	for _, e := range events {
		if e.Kind == observe.KindClient && e.Verb == "get" && e.Key == env.Namespace+"/signed" {
			reads[e.Object+" from "+e.Source]++
		}
	}
	if reads["Secret from "+observe.SourceAPI] == 0 || reads["Secret from "+observe.SourceCache] != 0 ||
		reads["HelloWorld from "+observe.SourceCache] == 0 || reads["HelloWorld from "+observe.SourceAPI] != 0 {
		t.Errorf("reads by source = %v, want the HelloWorld from the cache and the Secret from the API server\n%s", reads, optest.Dump(events))
	}
}

func TestHelloWorldCountAboveTenIsATerminalError(t *testing.T) {
	t.Parallel()
	env := optest.Start(t, optest.Options{Lab: operator.Lab31, Set: "requeue=error"})
	ctx := context.Background()
	hw := &v1alpha1.HelloWorld{
		ObjectMeta: metav1.ObjectMeta{Name: "loud", Namespace: env.Namespace},
		Spec:       v1alpha1.HelloWorldSpec{Message: "hey", Count: 11},
	}
	if err := env.Client.Create(ctx, hw); err != nil {
		t.Fatal(err)
	}
	key := env.Namespace + "/loud"
	env.WaitFor(t, waitLong, "a terminal reconcile", func(evs []observe.Event) bool {
		return count(evs, key, observe.KindReconcileEnd, observe.ResultTerminal) >= 1
	})
	got := &v1alpha1.HelloWorld{}
	if err := env.Client.Get(ctx, clientKey(env.Namespace, "loud"), got); err != nil {
		t.Fatal(err)
	}
	if c := findCondition(got.Status.Conditions, v1alpha1.ConditionFailed); c == nil || c.Reason != v1alpha1.ReasonInvalidSpec {
		t.Errorf("Failed condition = %+v, want reason InvalidSpec", c)
	}
	// Fixing the spec is the event that retries it.
	update(t, env, got, func(h *v1alpha1.HelloWorld) { h.Spec.Count = 3 })
	env.WaitFor(t, waitLong, "recovery after the spec fix", func([]observe.Event) bool {
		fresh := &v1alpha1.HelloWorld{}
		if err := env.Client.Get(ctx, clientKey(env.Namespace, "loud"), fresh); err != nil {
			return false
		}
		failed := findCondition(fresh.Status.Conditions, v1alpha1.ConditionFailed)
		ready := findCondition(fresh.Status.Conditions, v1alpha1.ConditionReady)
		return failed != nil && failed.Status == metav1.ConditionFalse && ready != nil && ready.Status == metav1.ConditionTrue
	})
}

// TestDeletedObjectIsNotAnError: a reconcile for an object that is gone
// reads NotFound and ends in success, not an error.
func TestDeletedObjectIsNotAnError(t *testing.T) {
	t.Parallel()
	env := optest.Start(t, optest.Options{Lab: operator.Lab31})
	ctx := context.Background()
	hw := &v1alpha1.HelloWorld{
		ObjectMeta: metav1.ObjectMeta{Name: "brief", Namespace: env.Namespace},
		Spec:       v1alpha1.HelloWorldSpec{Message: "bye"},
	}
	if err := env.Client.Create(ctx, hw); err != nil {
		t.Fatal(err)
	}
	key := env.Namespace + "/brief"
	env.WaitFor(t, waitLong, "a first successful reconcile", func(evs []observe.Event) bool {
		return count(evs, key, observe.KindReconcileEnd, observe.ResultSuccess) >= 1
	})
	if err := env.Client.Delete(ctx, hw); err != nil {
		t.Fatal(err)
	}
	// The first reconcile that starts after the DELETED watch event reads
	// NotFound (from the cache) and must end in success.
	afterDelete := func(evs []observe.Event) (start int, end int) {
		del := slices.IndexFunc(evs, func(e observe.Event) bool {
			return e.Kind == observe.KindWatch && e.Type == "DELETED" && e.Key == key
		})
		if del < 0 {
			return -1, -1
		}
		start = slices.IndexFunc(evs[del:], func(e observe.Event) bool {
			return e.Kind == observe.KindReconcileStart && e.Key == key
		})
		if start < 0 {
			return -1, -1
		}
		start += del
		id := evs[start].ReconcileID
		end = slices.IndexFunc(evs[start:], func(e observe.Event) bool {
			return e.Kind == observe.KindReconcileEnd && e.ReconcileID == id
		})
		if end < 0 {
			return start, -1
		}
		return start, start + end
	}
	events := env.WaitFor(t, waitLong, "a reconcile started after the deletion", func(evs []observe.Event) bool {
		_, end := afterDelete(evs)
		return end >= 0
	})
	start, end := afterDelete(events)
	notFound := slices.ContainsFunc(events[start:end], func(e observe.Event) bool {
		return e.Kind == observe.KindClient && e.Verb == "get" && e.Object == "HelloWorld" && e.Outcome == observe.OutcomeNotFound &&
			e.ReconcileID == events[start].ReconcileID
	})
	if events[end].Result != observe.ResultSuccess || !notFound {
		t.Fatalf("after deletion: result %q, NotFound read %v\n%s", events[end].Result, notFound, optest.Dump(events))
	}
}

// TestUpdateBurstIsMergedByTheQueue pauses reconciles (the step-through
// gate), changes a HelloWorld five times, resumes, and checks that the five
// watch events were served by fewer reconciles: the queue holds a key once.
func TestUpdateBurstIsMergedByTheQueue(t *testing.T) {
	t.Parallel()
	gate := observe.NewGate()
	env := optest.Start(t, optest.Options{Lab: operator.Lab31, Gate: gate})
	ctx := context.Background()
	hw := &v1alpha1.HelloWorld{
		ObjectMeta: metav1.ObjectMeta{Name: "burst", Namespace: env.Namespace},
		Spec:       v1alpha1.HelloWorldSpec{Message: "v0", Count: 1},
	}
	if err := env.Client.Create(ctx, hw); err != nil {
		t.Fatal(err)
	}
	key := env.Namespace + "/burst"
	readyAt := func(gen int64) func([]observe.Event) bool {
		return func([]observe.Event) bool {
			got := &v1alpha1.HelloWorld{}
			if err := env.Client.Get(ctx, clientKey(env.Namespace, "burst"), got); err != nil {
				return false
			}
			c := findCondition(got.Status.Conditions, v1alpha1.ConditionReady)
			return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == gen
		}
	}
	env.WaitFor(t, waitLong, "Ready for generation 1", readyAt(1))

	gate.Pause()
	for i := 1; i <= 5; i++ {
		update(t, env, hw, func(h *v1alpha1.HelloWorld) { h.Spec.Message = "v" + string(rune('0'+i)) })
	}
	// specAdds counts queue adds caused by watch events that carried a new
	// generation (a spec change, not a status write).
	specAdds := func(evs []observe.Event) int {
		specChange := map[uint64]bool{}
		var lastGen int64
		n := 0
		for _, e := range evs {
			if e.Kind == observe.KindWatch && e.Object == "HelloWorld" && e.Key == key {
				specChange[e.Seq] = e.Type == "MODIFIED" && e.Generation > lastGen
				lastGen = max(lastGen, e.Generation)
			}
			if e.Kind == observe.KindQueueAdd && e.Key == key && specChange[e.Cause] {
				n++
			}
		}
		return n
	}
	env.WaitFor(t, waitLong, "five adds from the spec changes", func(evs []observe.Event) bool { return specAdds(evs) >= 5 })
	resumedAt := len(env.Recorder.Events())
	gate.Resume()
	env.WaitFor(t, waitLong, "Ready for generation 6", readyAt(6))
	events := env.WaitFor(t, waitLong, "an idle queue", func(evs []observe.Event) bool {
		return count(evs, key, observe.KindQueueGet, "") == count(evs, key, observe.KindQueueDone, "")
	})
	gets := count(events[resumedAt:], key, observe.KindQueueGet, "")
	// At most: the reconcile that was waiting at the gate, the one for the
	// merged burst, and one for the status write it made.
	if specAdds(events) != 5 || gets > 3 {
		t.Fatalf("%d spec-change adds were served by %d queue gets after resuming; want 5 adds, at most 3 gets\n%s",
			specAdds(events), gets, optest.Dump(events))
	}
}

// TestHelloWorldReturnsAStatusConflict: when someone else changes the
// HelloWorld between the reconcile's read and its status write, the API
// server answers 409 Conflict, and the reconciler returns it (the lesson's
// "that is normal: return the error") rather than ending in success; the
// retry, from fresh data, writes the status.
func TestHelloWorldReturnsAStatusConflict(t *testing.T) {
	t.Parallel()
	// Lab 4.4's operator: no HelloWorld controller of its own runs in the
	// namespace, so the reconciles below are the only ones.
	env := optest.Start(t, optest.Options{Lab: operator.Lab44})
	ctx := context.Background()
	hw := &v1alpha1.HelloWorld{
		ObjectMeta: metav1.ObjectMeta{Name: "contested", Namespace: env.Namespace},
		Spec:       v1alpha1.HelloWorldSpec{Message: "hi", Count: 1},
	}
	if err := env.Client.Create(ctx, hw); err != nil {
		t.Fatal(err)
	}
	key := clientKey(env.Namespace, "contested")
	direct, err := client.NewWithWatch(optest.Config(), client.Options{Scheme: env.Manager.GetScheme()})
	if err != nil {
		t.Fatal(err)
	}
	interfered := 0
	// Just before the status write, another writer changes the object: the
	// write then carries an outdated resourceVersion.
	interfering := interceptor.NewClient(direct, interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			other := &v1alpha1.HelloWorld{}
			if err := c.Get(ctx, key, other); err != nil {
				return err
			}
			other.Annotations = map[string]string{"touched-by": "someone-else"}
			if err := c.Update(ctx, other); err != nil {
				return err
			}
			interfered++
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	})
	r := &hello.Reconciler{Client: interfering, APIReader: direct, Scheme: env.Manager.GetScheme(),
		Switches: env.Switches, Dependency: world.NewExternal(env.Switches, observe.Discard, 1)}
	res, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key})
	if interfered != 1 || !apierrors.IsConflict(err) || res != (reconcile.Result{}) {
		t.Fatalf("status write after a concurrent change: Result %+v, err %v (interfered %d); want the Conflict returned", res, err, interfered)
	}
	if want := "update status of HelloWorld " + key.String(); !strings.Contains(err.Error(), want) {
		t.Errorf("err = %q, want it to say %q", err, want)
	}

	r.Client = direct // the retry, with nobody in the way
	if res, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key}); err != nil || res != (reconcile.Result{}) {
		t.Fatalf("retry: Result %+v, err %v", res, err)
	}
	got := &v1alpha1.HelloWorld{}
	if err := env.Client.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if c := findCondition(got.Status.Conditions, v1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("after the retry, Ready = %+v", c)
	}
}
