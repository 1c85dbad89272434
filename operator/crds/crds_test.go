package crds_test

import (
	"testing"

	"github.com/operator-lab/lab/operator/api/v1alpha1"
	"github.com/operator-lab/lab/operator/crds"
)

func TestAllDecodesBothKindsOfTheGroup(t *testing.T) {
	all, err := crds.All()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, crd := range all {
		if crd.Spec.Group != v1alpha1.GroupVersion.Group {
			t.Errorf("CRD %s: group %q, want %q", crd.Name, crd.Spec.Group, v1alpha1.GroupVersion.Group)
		}
		served := false
		for _, v := range crd.Spec.Versions {
			if v.Name == v1alpha1.GroupVersion.Version && v.Served && v.Storage {
				served = v.Subresources != nil && v.Subresources.Status != nil
			}
		}
		if !served {
			t.Errorf("CRD %s: version %s is not served+stored with a status subresource", crd.Name, v1alpha1.GroupVersion.Version)
		}
		kinds[crd.Spec.Names.Kind] = true
	}
	for _, want := range []string{"HelloWorld", "Database"} {
		if !kinds[want] {
			t.Errorf("no CRD for kind %s (got %v)", want, kinds)
		}
	}
}
