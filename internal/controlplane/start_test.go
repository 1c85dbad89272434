package controlplane

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/operator-lab/lab/internal/labtest"
)

// widgetCRD is a minimal CRD so this package does not depend on lab's API.
func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.test.operator-lab.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "test.operator-lab.dev",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
			}},
		},
	}
}

func TestStartInstallsCRDsServesObjectsAndStops(t *testing.T) {
	t.Setenv("LAB_STATE_DIR", t.TempDir()) // never reuse a developer's lab env here
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var steps []string
	cp, err := Start(ctx, Options{CRDs: []*apiextensionsv1.CustomResourceDefinition{widgetCRD()},
		Progress: func(s Step) { steps = append(steps, s.Name) }})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = cp.Stop()
		}
	}()

	want := []string{StepBinaries, StepEtcd, StepAPIServer, StepCRDs}
	if len(steps) != len(want) {
		t.Fatalf("progress steps = %v, want %v", steps, want)
	}
	for i := range want {
		if steps[i] != want[i] {
			t.Fatalf("progress steps = %v, want %v", steps, want)
		}
	}
	u, err := url.Parse(cp.Host)
	if err != nil {
		t.Fatal(err)
	}
	if h := u.Hostname(); h != "127.0.0.1" && h != "localhost" && h != "::1" {
		t.Fatalf("API server listens on %s, want loopback", h)
	}
	if cp.KubernetesVersion != "v1.37.2" {
		t.Errorf("server version %q, want v1.37.2 (binaries not stamped?)", cp.KubernetesVersion)
	}
	info, err := os.Stat(cp.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("kubeconfig mode %v, want 0600", info.Mode().Perm())
	}

	cfg, err := configFromKubeconfig(cp.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "test.operator-lab.dev", Version: "v1", Resource: "widgets"}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "test.operator-lab.dev/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1", "namespace": "default"},
		"spec":     map[string]any{"size": int64(3)},
	}}
	if _, err := dyn.Resource(gvr).Namespace("default").Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create a Widget: %v", err)
	}
	got, err := dyn.Resource(gvr).Namespace("default").Get(ctx, "w1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size"); size != 3 {
		t.Fatalf("read back spec.size = %d, want 3", size)
	}

	children := labtest.Descendants(os.Getpid())
	if err := cp.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped = true
	for _, pid := range children {
		if name := labtest.CommandName(pid); (name == "etcd" || name == "kube-apiserver") && labtest.Alive(pid) {
			t.Errorf("%s (pid %d) still runs after Stop", name, pid)
		}
	}
	if _, err := os.Stat(cp.KubeconfigPath); !os.IsNotExist(err) {
		t.Errorf("Stop left the control-plane directory behind")
	}
}

func TestEnsureReusesTheSharedControlPlane(t *testing.T) {
	t.Setenv("LAB_STATE_DIR", t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan *State, 1)
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, Options{}, func(st *State) { ready <- st }) }()
	var st *State
	select {
	case st = <-ready:
	case err := <-served:
		t.Fatalf("Serve: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("Serve did not become ready")
	}

	cp, err := Ensure(context.Background(), Options{CRDs: []*apiextensionsv1.CustomResourceDefinition{widgetCRD()}})
	if err != nil {
		t.Fatal(err)
	}
	if !cp.Shared || cp.Host != st.Host {
		t.Fatalf("Ensure = {Shared:%v Host:%s}, want the shared control plane at %s", cp.Shared, cp.Host, st.Host)
	}
	// The CRD was applied to the shared control plane.
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "test.operator-lab.dev", Version: "v1", Resource: "widgets"}
	if _, err := dyn.Resource(gvr).Namespace("default").List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatalf("list Widgets on the shared control plane: %v", err)
	}
	if err := cp.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadState(); err != nil {
		t.Fatalf("Stop of a shared control plane stopped it: %v", err)
	}

	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve returned %v", err)
	}
	if _, err := ReadState(); err == nil {
		t.Fatal("state file left after Serve ended")
	}
}

func TestReadStateDetectsCorruptAndStaleFiles(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("LAB_STATE_DIR", dir)
	path := dir + "/state.json"
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadState(); err == nil || !contains(err.Error(), "corrupt", "lab env down") {
		t.Fatalf("corrupt state: err = %v, want a corrupt-state error naming the fix", err)
	}
	if _, err := Ensure(context.Background(), Options{}); err == nil || !contains(err.Error(), "corrupt") {
		t.Fatalf("Ensure with a corrupt state: err = %v", err)
	}
	var out strings.Builder
	if err := Down(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("Down left the corrupt state file")
	}

	// A state whose process is gone is stale: removed, reported as not running.
	if err := writeState(State{Version: stateVersion, PID: 999999, Host: "https://127.0.0.1:1", Kubeconfig: "/nonexistent"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadState(); err == nil || !contains(err.Error(), "stale") {
		t.Fatalf("stale state: err = %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("stale state file not removed")
	}
}
