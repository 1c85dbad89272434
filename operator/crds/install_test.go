package crds_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/operator/crds"
)

// widgets is a CRD of a group no lab uses; field is its one spec field.
func widgets(field string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Widget", ListKind: "WidgetList", Plural: "widgets", Singular: "widget"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{field: {Type: "string"}}},
					},
				}},
			}},
		},
	}
}

// TestInstallAddsWhatIsMissingAndRefusesAForeignDefinition: on a real API
// server, Install creates the CRDs the cluster lacks, finds its own again
// as they were stored (nothing to do the second time), and refuses a CRD
// of the same name with another schema without changing it.
func TestInstallAddsWhatIsMissingAndRefusesAForeignDefinition(t *testing.T) {
	ctx := context.Background()
	cp, err := controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	all, err := crds.All()
	if err != nil {
		t.Fatal(err)
	}
	want := append(all, widgets("size"))
	created, err := crds.Install(ctx, cp.Config, want...)
	if err != nil || len(created) != len(want) {
		t.Fatalf("first Install created %v (%v), want all %d", created, err, len(want))
	}
	if created, err := crds.Install(ctx, cp.Config, want...); err != nil || len(created) != 0 {
		t.Fatalf("second Install: created %v, %v; want nothing to do (the stored CRDs are lab's)", created, err)
	}
	_, err = crds.Install(ctx, cp.Config, widgets("colour"))
	var foreign *crds.ForeignCRDError
	if !errors.As(err, &foreign) || foreign.Name != "widgets.example.com" || !strings.Contains(err.Error(), "another schema") {
		t.Fatalf("Install over a CRD with another schema: %v, want a ForeignCRDError naming widgets.example.com", err)
	}
	if _, err := crds.Install(ctx, cp.Config, widgets("size")); err != nil {
		t.Errorf("the refused Install changed the cluster's CRD: %v", err)
	}
}
