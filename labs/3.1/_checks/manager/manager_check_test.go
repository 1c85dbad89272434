package manager_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/operator-lab/lab/labs/checkkit"
	"github.com/operator-lab/lab/labs/checkkit/cluster"
	"github.com/operator-lab/lab/observe"

	learnv1alpha1 "example.com/lab31/api/v1alpha1"
	"example.com/lab31/manager"
)

func TestManager(t *testing.T) {
	ctx := context.Background()
	cfg := cluster.Config(t)
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = learnv1alpha1.AddToScheme(scheme)
	c := cluster.Client(t, cfg, scheme)
	ns := cluster.Namespace(t, c)

	conf := manager.Config{
		MetricsAddr:             checkkit.FreeAddr(t),
		ProbeAddr:               checkkit.FreeAddr(t),
		LeaderElectionID:        checkkit.Name("lease"),
		LeaderElectionNamespace: ns,
		Namespace:               ns,
	}
	// The learner's manager may write only in ns (its writes elsewhere are
	// answered Forbidden): one that watches every namespace must not write
	// into the namespaces of the checks that run beside this one.
	mgr, err := manager.New(cluster.ConfinedConfig(cfg, ns), conf)
	if err != nil {
		checkkit.Expect(t, "manager.New to build a manager", fmt.Sprintf("error %q", err))
	}
	obs := cluster.Observe(t)
	r := &manager.HelloWorldReconciler{Client: mgr.GetClient()}
	if err := r.SetupWithManager(mgr, obs.QueueOptions()); err != nil {
		checkkit.Expect(t, "SetupWithManager to register the controller", fmt.Sprintf("error %q", err))
	}
	cluster.Start(t, mgr)

	t.Run("serves health probes", func(t *testing.T) {
		for _, path := range []string{"/healthz", "/readyz"} {
			checkkit.Eventually(t, fmt.Sprintf("%s on the probe address %s to answer 200", path, conf.ProbeAddr), func() error {
				_, err := get("http://" + conf.ProbeAddr + path)
				return err
			})
		}
	})

	t.Run("serves metrics", func(t *testing.T) {
		checkkit.Eventually(t, fmt.Sprintf("/metrics on the metrics address %s to answer 200 with controller-runtime metrics", conf.MetricsAddr), func() error {
			body, err := get("http://" + conf.MetricsAddr + "/metrics")
			if err != nil {
				return err
			}
			if !strings.Contains(body, "controller_runtime_") {
				return fmt.Errorf("a page without controller_runtime_ metrics")
			}
			return nil
		})
	})

	t.Run("holds the leader election lease", func(t *testing.T) {
		checkkit.Eventually(t, fmt.Sprintf("a Lease %q in namespace %s held by the manager", conf.LeaderElectionID, ns), func() error {
			var lease coordinationv1.Lease
			if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: conf.LeaderElectionID}, &lease); err != nil {
				if apierrors.IsNotFound(err) {
					return fmt.Errorf("no such Lease (is LeaderElection on, with LeaderElectionID and LeaderElectionNamespace?)")
				}
				return err
			}
			if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
				return fmt.Errorf("a Lease nobody holds")
			}
			return nil
		})
	})

	hello := &learnv1alpha1.HelloWorld{
		ObjectMeta: metav1.ObjectMeta{Name: checkkit.Name("hello"), Namespace: ns},
		Spec:       learnv1alpha1.HelloWorldSpec{Message: checkkit.Pick("hi", "hello", "good morning", "salut") + " " + checkkit.Name("to")},
	}
	key := ns + "/" + hello.Name
	cmKey := types.NamespacedName{Namespace: ns, Name: hello.Name + "-greeting"}

	t.Run("reconciles a created HelloWorld", func(t *testing.T) {
		if err := c.Create(ctx, hello); err != nil {
			t.Fatalf("create HelloWorld: %v", err)
		}
		checkkit.Eventually(t, fmt.Sprintf("ConfigMap %s with the HelloWorld's message", cmKey), func() error {
			var cm corev1.ConfigMap
			if err := c.Get(ctx, cmKey, &cm); err != nil {
				return fmt.Errorf("no ConfigMap (%v)", err)
			}
			if cm.Data["message"] != hello.Spec.Message {
				return fmt.Errorf("message %q", cm.Data["message"])
			}
			return nil
		})
		if len(cluster.OfKind(cluster.ForKey(obs.Events(), key), observe.KindQueueGet)) == 0 {
			checkkit.Expect(t, "the controller to run with the options SetupWithManager receives (WithOptions(opts))",
				"no events from the queue those options build")
		}
	})

	t.Run("watches only its namespace", func(t *testing.T) {
		elsewhere := cluster.Namespace(t, c)
		other := &learnv1alpha1.HelloWorld{
			ObjectMeta: metav1.ObjectMeta{Name: checkkit.Name("elsewhere"), Namespace: elsewhere},
			Spec:       learnv1alpha1.HelloWorldSpec{Message: "not for this manager"},
		}
		if err := c.Create(ctx, other); err != nil {
			t.Fatalf("create HelloWorld: %v", err)
		}
		// A HelloWorld created after it in the watched namespace is a marker:
		// once that one is reconciled, the other would have been too.
		marker := &learnv1alpha1.HelloWorld{
			ObjectMeta: metav1.ObjectMeta{Name: checkkit.Name("marker"), Namespace: ns},
			Spec:       learnv1alpha1.HelloWorldSpec{Message: "marker"},
		}
		if err := c.Create(ctx, marker); err != nil {
			t.Fatalf("create HelloWorld: %v", err)
		}
		obs.WaitFor(t, "the HelloWorld in the watched namespace to be reconciled", func(events []observe.Event) bool {
			return len(cluster.OfKind(cluster.ForKey(events, ns+"/"+marker.Name), observe.KindQueueDone)) > 0
		}, func(events []observe.Event) string {
			return cluster.Describe(cluster.ForKey(events, ns+"/"+marker.Name))
		})
		if seen := cluster.ForKey(obs.Events(), elsewhere+"/"+other.Name); len(seen) > 0 {
			checkkit.Expect(t, "no reconcile of a HelloWorld outside Config.Namespace (cache.Options.DefaultNamespaces)",
				cluster.Describe(seen))
		}
	})

	t.Run("watches the ConfigMaps it owns", func(t *testing.T) {
		var cm corev1.ConfigMap
		if err := c.Get(ctx, cmKey, &cm); err != nil {
			t.Skipf("no ConfigMap to delete: %v", err)
		}
		before := len(obs.Events())
		if err := c.Delete(ctx, &cm); err != nil {
			t.Fatalf("delete ConfigMap: %v", err)
		}
		checkkit.Eventually(t, "the deleted ConfigMap to be recreated (a watch on owned ConfigMaps: Owns)", func() error {
			var again corev1.ConfigMap
			if err := c.Get(ctx, cmKey, &again); err != nil || again.UID == cm.UID {
				return fmt.Errorf("it stayed deleted")
			}
			return nil
		})
		if len(cluster.OfKind(cluster.ForKey(obs.Events()[before:], key), observe.KindQueueAdd)) == 0 {
			checkkit.Expect(t, "a queue.add for the owner "+key+" when its ConfigMap was deleted", "none")
		}
	})
}

func get(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", fmt.Errorf("no answer (%v)", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("status %d", resp.StatusCode)
	}
	return string(body), nil
}
