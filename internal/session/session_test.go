package session_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/internal/session"
)

// TestSessionOnTheSharedControlPlaneLeavesNoNamespace runs a session on a
// `lab env up` control plane (served in this process) and closes it: its
// namespace and the objects in it are gone, not stuck Terminating — envtest
// runs no namespace controller to finish the deletion.
func TestSessionOnTheSharedControlPlaneLeavesNoNamespace(t *testing.T) {
	ctrl.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard()) // deprecation warnings of the resources deleted
	t.Setenv("LAB_STATE_DIR", t.TempDir())
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	ready := make(chan *controlplane.State, 1)
	go func() {
		served <- controlplane.Serve(ctx, controlplane.Options{}, func(st *controlplane.State) { ready <- st })
	}()
	defer func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	select {
	case <-ready:
	case err := <-served:
		t.Fatalf("serve: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the shared control plane did not start")
	}

	s, err := session.Start(ctx, session.Options{Lab: "3.1"})
	if err != nil {
		t.Fatal(err)
	}
	ns := s.Namespace
	c := s.Client
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "left-behind", Namespace: ns}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	// An object whose finalizer nobody will remove once the operator has
	// stopped (a Database of lab 4.4 has one).
	held := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: ns, Finalizers: []string{"lab.test/held"}}}
	if err := c.Create(ctx, held); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s after Close: %v, want it gone", ns, err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("a ConfigMap of the session after Close: %v, want it gone", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(held), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("a ConfigMap with a finalizer after Close: %v, want it gone", err)
	}
}

// TestFailedStartIsAnErrorNotAPanic: a session that cannot start returns
// an error (it used to close a nil session and panic).
func TestFailedStartIsAnErrorNotAPanic(t *testing.T) {
	t.Setenv("LAB_STATE_DIR", t.TempDir())
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // its own, so other tests' control planes are not counted
	_, err := session.Start(context.Background(), session.Options{Lab: "3.1", Kubeconfig: "/nonexistent/kubeconfig"})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/kubeconfig") {
		t.Errorf("start with a missing kubeconfig: %v, want an error naming it", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := session.Start(ctx, session.Options{Lab: "3.1"}); !errors.Is(err, context.Canceled) {
		t.Errorf("start with a cancelled context: %v, want context.Canceled", err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		t.Errorf("a failed start left %s in the temp folder", entries[0].Name())
	}
}
