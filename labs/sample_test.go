package labs_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/operator-lab/lab/labs"
)

func getLab(t *testing.T, id string) *labs.Lab {
	t.Helper()
	lab, err := labs.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	return lab
}

// TestSampleKindIsTheCRDsStorageVersion: the runner's sample kind comes
// with the group and stored version of the lab's own CRD for it.
func TestSampleKindIsTheCRDsStorageVersion(t *testing.T) {
	for id, kind := range map[string]string{"3.1": "HelloWorld", "4.4": "Database"} {
		lab := getLab(t, id)
		gvk, err := lab.SampleKind()
		if err != nil {
			t.Fatalf("lab %s: %v", id, err)
		}
		if gvk.Kind != kind || gvk.Group == "" || gvk.Version == "" {
			t.Errorf("lab %s: sample kind %v, want %s with its CRD's group and version", id, gvk, kind)
		}
		crds, err := lab.CustomResourceDefinitions()
		if err != nil {
			t.Fatal(err)
		}
		served := false
		for _, crd := range crds {
			for _, v := range crd.Spec.Versions {
				served = served || crd.Spec.Group == gvk.Group && crd.Spec.Names.Kind == kind && v.Name == gvk.Version && v.Storage
			}
		}
		if !served {
			t.Errorf("lab %s: no CRD stores %v", id, gvk)
		}
	}
	if _, err := (&labs.Lab{ID: "0.0"}).SampleKind(); err == nil || !strings.Contains(err.Error(), "no runner") {
		t.Errorf("a lab without a runner: %v, want an error saying so", err)
	}
}

// TestSampleNewNumbersAndInvalidates: the n-th sample is Name-n in the
// namespace, with the declared spec (a copy: changing it leaves the lab's
// alone), and the invalid one has the invalid spec over it.
func TestSampleNewNumbersAndInvalidates(t *testing.T) {
	lab := getLab(t, "3.1")
	s := lab.Runner.Sample
	gvk, err := lab.SampleKind()
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.New(gvk, "ns", 1, false)
	if err != nil {
		t.Fatal(err)
	}
	third, err := s.New(gvk, "ns", 3, false)
	if err != nil {
		t.Fatal(err)
	}
	if first.GetName() != s.Name || third.GetName() != s.Name+"-3" || third.GetNamespace() != "ns" || third.GroupVersionKind() != gvk {
		t.Errorf("samples %s/%s %v and %s, want ns/%s, %s-3 of %v", first.GetNamespace(), first.GetName(), first.GroupVersionKind(), third.GetName(), s.Name, s.Name, gvk)
	}
	if msg, _, _ := unstructured.NestedString(first.Object, "spec", "message"); msg != s.Spec["message"] {
		t.Errorf("spec.message %q, want the declared %q", msg, s.Spec["message"])
	}
	if err := unstructured.SetNestedField(first.Object, "changed", "spec", "message"); err != nil {
		t.Fatal(err)
	}
	if s.Spec["message"] == "changed" {
		t.Error("changing a sample changed the lab's declared spec")
	}
	invalid, err := s.New(gvk, "ns", 1, true)
	if err != nil {
		t.Fatal(err)
	}
	for field, want := range s.Invalid {
		if got, _, _ := unstructured.NestedFieldNoCopy(invalid.Object, "spec", field); got != want {
			t.Errorf("invalid spec.%s %v, want %v", field, got, want)
		}
	}
	if msg, _, _ := unstructured.NestedString(invalid.Object, "spec", "message"); s.Invalid["message"] == nil && msg != s.Spec["message"] {
		t.Errorf("invalid spec.message %q, want the declared %q kept", msg, s.Spec["message"])
	}

	if _, err := getLab(t, "4.4").Runner.Sample.New(gvk, "ns", 1, true); err == nil {
		t.Error("a sample without an invalid spec made an invalid object")
	}
}

// TestSampleChangeEditsTheDeclaredField: text gets one edit number, the
// next generation's, however often it changes; a number goes up by one.
func TestSampleChangeEditsTheDeclaredField(t *testing.T) {
	greeting := getLab(t, "3.1").Runner.Sample
	u, err := greeting.New(schemaOf(t, "3.1"), "ns", 1, false)
	if err != nil {
		t.Fatal(err)
	}
	for gen, want := range []string{"message → Hello from your controller (edit 1)", "message → Hello from your controller (edit 2)"} {
		u.SetGeneration(int64(gen))
		got, err := greeting.Change(u)
		if err != nil || got != want {
			t.Errorf("change at generation %d = %q, %v; want %q", gen, got, err, want)
		}
	}

	database := getLab(t, "4.4").Runner.Sample
	u, err = database.New(schemaOf(t, "4.4"), "ns", 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := database.Change(u); err != nil || got != "replicas → 2" {
		t.Errorf("change = %q, %v; want replicas → 2", got, err)
	}
	if v, _, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "replicas"); v != float64(2) {
		t.Errorf("spec.replicas = %v (%T), want 2", v, v)
	}

	unstructured.RemoveNestedField(u.Object, "spec", "replicas")
	if _, err := database.Change(u); err == nil {
		t.Error("changing a field the object lacks did not fail")
	}
}

func schemaOf(t *testing.T, id string) schema.GroupVersionKind {
	t.Helper()
	gvk, err := getLab(t, id).SampleKind()
	if err != nil {
		t.Fatal(err)
	}
	return gvk
}
