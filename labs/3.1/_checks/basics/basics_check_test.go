package basics_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/operator-lab/lab/labs/checkkit"
	"github.com/operator-lab/lab/labs/checkkit/cluster"
	"github.com/operator-lab/lab/observe"

	learnv1alpha1 "example.com/lab31/api/v1alpha1"
	"example.com/lab31/basics"
)

func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = learnv1alpha1.AddToScheme(scheme)
	return scheme
}

func newHelloWorld(ns string) *learnv1alpha1.HelloWorld {
	return &learnv1alpha1.HelloWorld{
		ObjectMeta: metav1.ObjectMeta{Name: checkkit.Name(checkkit.Pick("hello", "welcome", "hi")), Namespace: ns},
		Spec:       learnv1alpha1.HelloWorldSpec{Message: checkkit.Name(checkkit.Pick("hi", "bonjour", "hola"))},
	}
}

// startController runs the learner's reconciler as a controller for
// HelloWorlds and the ConfigMaps they own, observed.
func startController(t *testing.T, obs *cluster.Observer) (client.Client, string) {
	cfg := cluster.Config(t)
	scheme := newScheme()
	c := cluster.Client(t, cfg, scheme)
	ns := cluster.Namespace(t, c)
	cluster.StartManager(t, cfg, scheme, ns, func(mgr ctrl.Manager) error {
		r := &basics.Reconciler{Client: observe.Client(obs.Bus, mgr.GetClient())}
		return ctrl.NewControllerManagedBy(mgr).
			Named("helloworld").
			For(&learnv1alpha1.HelloWorld{}).
			Owns(&corev1.ConfigMap{}).
			WithOptions(obs.QueueOptions()).
			Complete(observe.Reconciler(obs.Bus, "helloworld", nil, r))
	})
	return c, ns
}

// waitForConfigMap waits for the ConfigMap key to hold message. With obs,
// it ends early once the controller is done with hello (or stuck on one
// error): no later write can come then.
func waitForConfigMap(t *testing.T, c client.Reader, key types.NamespacedName, message string, obs *cluster.Observer, hello *learnv1alpha1.HelloWorld) *corev1.ConfigMap {
	t.Helper()
	var hopeless func(time.Time) string
	if obs != nil {
		// No correct reconciler of a HelloWorld fails ten times in a row.
		hopeless = obs.DoneWith(hello.Namespace+"/"+hello.Name, 10)
	}
	var cm corev1.ConfigMap
	checkkit.EventuallyUnless(t, fmt.Sprintf("ConfigMap %s with message %q", key, message), func() error {
		if err := c.Get(context.Background(), key, &cm); err != nil {
			return fmt.Errorf("no ConfigMap (%v)", err)
		}
		if cm.Data["message"] != message {
			return fmt.Errorf("message %q", cm.Data["message"])
		}
		return nil
	}, hopeless)
	return &cm
}

func TestConfigMapInSync(t *testing.T) {
	ctx := context.Background()
	obs := cluster.Observe(t)
	c, ns := startController(t, obs)
	hello := newHelloWorld(ns)
	if err := c.Create(ctx, hello); err != nil {
		t.Fatalf("create HelloWorld: %v", err)
	}
	cmKey := types.NamespacedName{Namespace: ns, Name: basics.ConfigMapName(hello)}

	t.Run("created with the message", func(t *testing.T) {
		waitForConfigMap(t, c, cmKey, hello.Spec.Message, obs, hello)
	})

	t.Run("owned by its HelloWorld", func(t *testing.T) {
		cm := waitForConfigMap(t, c, cmKey, hello.Spec.Message, obs, hello)
		owner := metav1.GetControllerOf(cm)
		switch {
		case owner == nil:
			checkkit.Expect(t, "the ConfigMap to have the HelloWorld as controller owner (SetControllerReference)", "no controller owner reference")
		case owner.UID != hello.UID || owner.Kind != "HelloWorld":
			checkkit.Expect(t, "the controller owner to be HelloWorld %s", fmt.Sprintf("%s %s", owner.Kind, owner.Name), hello.Name)
		}
	})

	t.Run("updated when the message changes", func(t *testing.T) {
		var latest learnv1alpha1.HelloWorld
		if err := c.Get(ctx, client.ObjectKeyFromObject(hello), &latest); err != nil {
			t.Fatalf("get HelloWorld: %v", err)
		}
		latest.Spec.Message = checkkit.Name("changed")
		if err := c.Update(ctx, &latest); err != nil {
			t.Fatalf("update HelloWorld: %v", err)
		}
		waitForConfigMap(t, c, cmKey, latest.Spec.Message, obs, &latest)
		hello = &latest
	})

	t.Run("repaired when someone edits it", func(t *testing.T) {
		cm := waitForConfigMap(t, c, cmKey, hello.Spec.Message, obs, hello)
		cm.Data["message"] = "tampered"
		if err := c.Update(ctx, cm); err != nil {
			t.Fatalf("edit ConfigMap: %v", err)
		}
		waitForConfigMap(t, c, cmKey, hello.Spec.Message, obs, hello)
	})
}

func TestDeletedGreeting(t *testing.T) {
	ctx := context.Background()
	obs := cluster.Observe(t)
	c, ns := startController(t, obs)
	hello := newHelloWorld(ns)
	key := ns + "/" + hello.Name

	t.Run("a HelloWorld that never existed", func(t *testing.T) {
		r := &basics.Reconciler{Client: c}
		res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: checkkit.Name("gone")}})
		if err != nil || !res.IsZero() {
			checkkit.Expect(t, "Reconcile of a missing HelloWorld to return ctrl.Result{} and no error",
				fmt.Sprintf("%+v and error %v", res, err))
		}
	})

	t.Run("deleting a HelloWorld causes no error retries", func(t *testing.T) {
		if err := c.Create(ctx, hello); err != nil {
			t.Fatalf("create HelloWorld: %v", err)
		}
		obs.WaitFor(t, "a first reconcile of "+key, func(events []observe.Event) bool {
			return len(cluster.OfKind(cluster.ForKey(events, key), observe.KindQueueDone)) > 0
		}, func(events []observe.Event) string { return cluster.Describe(cluster.ForKey(events, key)) })
		before := len(obs.Events())
		if err := c.Delete(ctx, hello); err != nil {
			t.Fatalf("delete HelloWorld: %v", err)
		}
		after := func(events []observe.Event) []observe.Event { return cluster.ForKey(events[before:], key) }
		events := obs.WaitFor(t, "a reconcile after the deletion", func(events []observe.Event) bool {
			return len(cluster.OfKind(after(events), observe.KindQueueDone)) > 0
		}, func(events []observe.Event) string { return cluster.Describe(after(events)) })
		for _, e := range after(events) {
			if e.Kind == observe.KindQueueAddRateLimited || (e.Kind == observe.KindReconcileEnd && e.Result == observe.ResultError) {
				checkkit.Expect(t, "the deleted HelloWorld to be done with (client.IgnoreNotFound)",
					cluster.Describe(cluster.OfKind(after(events), observe.KindReconcileEnd, observe.KindQueueAddRateLimited)))
			}
		}
	})
}

// faults wraps a client so that, while a failure is set, the calls it
// names fail with it, as they would while the API server is overloaded or
// etcd is slow. It counts the calls it failed.
type faults struct {
	mu sync.Mutex
	// readHello fails every read (get, list) of a HelloWorld; writeConfigMap
	// every write (create, update, patch, apply) of a ConfigMap.
	readHello, writeConfigMap error
	failed                    int
}

// set arms the failures (nil: none) and returns how many calls failed
// since the last set.
func (f *faults) set(readHello, writeConfigMap error) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	failed := f.failed
	f.readHello, f.writeConfigMap, f.failed = readHello, writeConfigMap, 0
	return failed
}

// fail returns the armed error for a call, counting it.
func (f *faults) fail(read bool, obj runtime.Object) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var err error
	switch obj.(type) {
	case *learnv1alpha1.HelloWorld, *learnv1alpha1.HelloWorldList:
		if read {
			err = f.readHello
		}
	case *corev1.ConfigMap:
		if !read {
			err = f.writeConfigMap
		}
	}
	if err != nil {
		f.failed++
	}
	return err
}

// applyFail is fail for a server-side apply, which names its kind itself.
func (f *faults) applyFail(obj runtime.ApplyConfiguration) error {
	if k, ok := obj.(interface{ GetKind() *string }); ok && k.GetKind() != nil && *k.GetKind() == "ConfigMap" {
		return f.fail(false, &corev1.ConfigMap{})
	}
	return nil
}

func (f *faults) wrap(c client.WithWatch) client.Client {
	return interceptor.NewClient(c, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if err := f.fail(true, obj); err != nil {
				return err
			}
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := f.fail(true, list); err != nil {
				return err
			}
			return c.List(ctx, list, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := f.fail(false, obj); err != nil {
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if err := f.fail(false, obj); err != nil {
				return err
			}
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if err := f.fail(false, obj); err != nil {
				return err
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			if err := f.applyFail(obj); err != nil {
				return err
			}
			return c.Apply(ctx, obj, opts...)
		},
	})
}

// apiFailure is an error the API server answers with when it cannot serve a
// request right now: not NotFound, and worth retrying.
func apiFailure() error {
	return checkkit.Pick(
		apierrors.NewInternalError(errors.New("etcdserver: request timed out")),
		apierrors.NewServiceUnavailable("the server is currently unable to handle the request"),
		apierrors.NewTimeoutError("request did not complete within the allowed duration", 1),
	)
}

// returned renders what Reconcile returned, for failure messages.
func returned(res ctrl.Result, err error) string {
	r := "ctrl.Result{}"
	if !res.IsZero() {
		r = fmt.Sprintf("%+v", res)
	}
	if err == nil {
		return r + " and no error"
	}
	return fmt.Sprintf("%s and error %q", r, err)
}

func TestFailuresAreReturned(t *testing.T) {
	ctx := context.Background()
	cfg := cluster.Config(t)
	scheme := newScheme()
	c := cluster.Client(t, cfg, scheme)
	ns := cluster.Namespace(t, c)
	hello := newHelloWorld(ns)
	if err := c.Create(ctx, hello); err != nil {
		t.Fatalf("create HelloWorld: %v", err)
	}
	// The check calls Reconcile itself, with a client that goes straight to
	// the API server and fails the calls it is told to.
	direct, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatalf("create client: %v", err)
	}
	f := &faults{}
	r := &basics.Reconciler{Client: f.wrap(direct)}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(hello)}

	t.Run("a failed read of the HelloWorld is returned", func(t *testing.T) {
		failure := apiFailure()
		f.set(failure, nil)
		res, err := r.Reconcile(ctx, req)
		switch failed := f.set(nil, nil); {
		case failed == 0:
			checkkit.Expect(t, "Reconcile to read the HelloWorld through its Client", "no read of it")
		case err == nil:
			checkkit.Expect(t, "Reconcile to return the error when reading the HelloWorld fails (%q): only NotFound means it is gone; any other error is returned so the controller retries",
				returned(res, err), failure)
		}
	})

	t.Run("a failed write of the ConfigMap is returned", func(t *testing.T) {
		failure := apiFailure()
		f.set(nil, failure)
		res, err := r.Reconcile(ctx, req)
		switch failed := f.set(nil, nil); {
		case failed == 0:
			checkkit.Expect(t, "Reconcile of a HelloWorld without its ConfigMap to create the ConfigMap through its Client", "no write of a ConfigMap")
		case err == nil:
			checkkit.Expect(t, "Reconcile to return the error when writing the ConfigMap fails (%q), so the controller retries; the ConfigMap is still missing",
				returned(res, err), failure)
		}
	})
}

func TestReconcileIsIdempotent(t *testing.T) {
	ctx := context.Background()
	obs := cluster.Observe(t)
	cfg := cluster.Config(t)
	scheme := newScheme()
	// No controller here: the check calls Reconcile itself, through the
	// manager's cached client, as a controller would.
	c := cluster.Client(t, cfg, scheme)
	ns := cluster.Namespace(t, c)
	mgr := cluster.StartManager(t, cfg, scheme, ns, func(ctrl.Manager) error { return nil })
	hello := newHelloWorld(ns)
	if err := c.Create(ctx, hello); err != nil {
		t.Fatalf("create HelloWorld: %v", err)
	}
	r := &basics.Reconciler{Client: observe.Client(obs.Bus, mgr.GetClient())}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(hello)}
	cmKey := types.NamespacedName{Namespace: ns, Name: basics.ConfigMapName(hello)}

	reconcile := func(t *testing.T, i, n int, message string) {
		t.Helper()
		var err error
		checkkit.Eventually(t, "the HelloWorld in the cache", func() error {
			var g learnv1alpha1.HelloWorld
			if err := mgr.GetClient().Get(ctx, req.NamespacedName, &g); err != nil {
				return err
			}
			if g.Spec.Message != message {
				return fmt.Errorf("message %q", g.Spec.Message)
			}
			return nil
		})
		if _, err = r.Reconcile(ctx, req); err != nil {
			checkkit.Expect(t, "reconcile %d of %d to succeed", fmt.Sprintf("error %q", err), i, n)
		}
		// Let the cache catch up, as it would between two real reconciles.
		waitForConfigMap(t, mgr.GetClient(), cmKey, message, nil, hello)
	}
	// Writes are counted by what the API server ends up with, not by the
	// client verb that made them (create, update, patch or apply): a new
	// object is a new UID, a write that changed something a new
	// resourceVersion.
	stored := func(t *testing.T) corev1.ConfigMap {
		t.Helper()
		var cm corev1.ConfigMap
		if err := c.Get(ctx, cmKey, &cm); err != nil {
			t.Fatalf("get ConfigMap: %v", err)
		}
		return cm
	}

	n := checkkit.Between(4, 7)
	t.Run(fmt.Sprintf("%d reconciles create one ConfigMap", n), func(t *testing.T) {
		var first corev1.ConfigMap
		for i := 1; i <= n; i++ {
			reconcile(t, i, n, hello.Spec.Message)
			cm := stored(t)
			switch {
			case i == 1:
				first = cm
			case cm.UID != first.UID:
				checkkit.Expect(t, "1 ConfigMap, created once, after %d reconciles", fmt.Sprintf("a new one (another UID) after reconcile %d", i), n)
			case cm.ResourceVersion != first.ResourceVersion:
				checkkit.Expect(t, "no writes while nothing changed", fmt.Sprintf("the ConfigMap changed (resourceVersion %s → %s) in reconcile %d", first.ResourceVersion, cm.ResourceVersion, i))
			}
		}
	})

	t.Run("a changed message updates it once", func(t *testing.T) {
		var latest learnv1alpha1.HelloWorld
		if err := c.Get(ctx, req.NamespacedName, &latest); err != nil {
			t.Fatalf("get HelloWorld: %v", err)
		}
		latest.Spec.Message = checkkit.Name("changed")
		if err := c.Update(ctx, &latest); err != nil {
			t.Fatalf("update HelloWorld: %v", err)
		}
		versions := []string{stored(t).ResourceVersion}
		for i := 1; i <= 2; i++ {
			reconcile(t, i, 2, latest.Spec.Message)
			if rv := stored(t).ResourceVersion; rv != versions[len(versions)-1] {
				versions = append(versions, rv)
			}
		}
		if got := len(versions) - 1; got != 1 {
			checkkit.Expect(t, "1 write of the ConfigMap for one change of message", fmt.Sprintf("%d writes", got))
		}
	})
}
