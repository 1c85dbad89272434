package labs_test

import (
	"bytes"
	"maps"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/labs/workspace"
	"github.com/operator-lab/lab/operator/api/v1alpha1"
	"github.com/operator-lab/lab/operator/crds"
)

// operatorAPIDir is the reference operator's API package, as it is on disk
// (not the embedded copy), relative to this package.
const operatorAPIDir = "../operator/api/v1alpha1"

// TestAPILabsShareTheOperatorsSchemaAndTypes: every embedded lab with `api:`
// (lab 3.1 at least) installs, for each of its kinds, a CRD whose versions
// and schema deep-equal the reference operator's CRD for that kind (only the
// group differs), and a workspace made for it holds the operator's API type
// files byte for byte. A change on either side — the lab's CRD, the
// operator's CRD, the types, or how a workspace gets them — fails here.
func TestAPILabsShareTheOperatorsSchemaAndTypes(t *testing.T) {
	all, err := labs.All()
	if err != nil {
		t.Fatal(err)
	}
	operatorCRDs, err := crds.All()
	if err != nil {
		t.Fatal(err)
	}
	var withAPI []string
	for _, lab := range all {
		if lab.API == nil {
			continue
		}
		withAPI = append(withAPI, lab.ID)
		t.Run(lab.ID, func(t *testing.T) {
			mine, err := lab.CustomResourceDefinitions()
			if err != nil {
				t.Fatal(err)
			}
			for _, kind := range lab.API.Kinds {
				i := slices.IndexFunc(mine, func(c *apiextensionsv1.CustomResourceDefinition) bool { return c.Spec.Names.Kind == kind })
				j := slices.IndexFunc(operatorCRDs, func(c *apiextensionsv1.CustomResourceDefinition) bool { return c.Spec.Names.Kind == kind })
				if i < 0 || j < 0 {
					t.Fatalf("kind %s: the lab's CRD found %v, the operator's %v", kind, i >= 0, j >= 0)
				}
				got, want := mine[i], operatorCRDs[j]
				if got.Spec.Group != lab.API.Group || want.Spec.Group != v1alpha1.GroupVersion.Group {
					t.Errorf("kind %s: groups %s (lab) and %s (operator), want %s and %s",
						kind, got.Spec.Group, want.Spec.Group, lab.API.Group, v1alpha1.GroupVersion.Group)
				}
				if !reflect.DeepEqual(got.Spec.Versions, want.Spec.Versions) {
					t.Errorf("kind %s: the lab's versions and schema differ from the operator's:\n%s", kind, schemaDiff(t, got, want))
				}
				checkFieldsAreTheTypes(t, kind, got)
				if !reflect.DeepEqual(got.Spec.Names, want.Spec.Names) || got.Spec.Scope != want.Spec.Scope {
					t.Errorf("kind %s: names %+v scope %s, the operator's %+v scope %s", kind, got.Spec.Names, got.Spec.Scope, want.Spec.Names, want.Spec.Scope)
				}
			}

			dir := t.TempDir()
			if _, err := workspace.Create(lab, dir, labs.DefaultLanguage); err != nil {
				t.Fatal(err)
			}
			sources, err := filepath.Glob(filepath.Join(operatorAPIDir, "*.go"))
			if err != nil {
				t.Fatal(err)
			}
			checked := 0
			for _, src := range sources {
				name := filepath.Base(src)
				rel := path.Join(labs.APIDir, name)
				if !slices.Contains(lab.SharedFiles(), rel) || slices.Contains(lab.Common, rel) {
					// Not given to the lab, or the lab's own (groupversion_info.go).
					continue
				}
				want, err := os.ReadFile(src)
				if err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(filepath.Join(dir, labs.APIDir, name))
				if err != nil {
					t.Errorf("the workspace lacks %s/%s: %v", labs.APIDir, name, err)
					continue
				}
				if !bytes.Equal(got, want) {
					t.Errorf("the workspace's %s/%s is not the operator's %s byte for byte", labs.APIDir, name, src)
				}
				checked++
			}
			if lab.ID == "3.1" && !slices.Contains(lab.SharedFiles(), path.Join(labs.APIDir, "helloworld_types.go")) {
				t.Error("lab 3.1's workspace does not get the operator's helloworld_types.go")
			}
			if checked == 0 {
				t.Error("no API file of the operator's was compared")
			}
		})
	}
	if !slices.Contains(withAPI, "3.1") {
		t.Errorf("labs with api: %v; lab 3.1's exercises must use the operator's HelloWorld", withAPI)
	}
}

// schemaDiff shows the two CRDs' versions as YAML, lab's first.
func schemaDiff(t *testing.T, lab, operator *apiextensionsv1.CustomResourceDefinition) string {
	t.Helper()
	a, err := yaml.Marshal(lab.Spec.Versions)
	if err != nil {
		t.Fatal(err)
	}
	b, err := yaml.Marshal(operator.Spec.Versions)
	if err != nil {
		t.Fatal(err)
	}
	return "lab:\n" + string(a) + "\noperator:\n" + string(b)
}

// checkFieldsAreTheTypes: the CRD's spec and status properties are the JSON
// fields of the operator's Go type for kind — so a type changed without
// `make manifests` (or a CRD edited by hand) is caught too, not only a lab
// whose CRD drifted from the operator's.
func checkFieldsAreTheTypes(t *testing.T, kind string, crd *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	obj, err := scheme.New(v1alpha1.GroupVersion.WithKind(kind))
	if err != nil {
		t.Fatal(err)
	}
	typ := reflect.TypeOf(obj).Elem()
	for _, v := range crd.Spec.Versions {
		for _, part := range []string{"Spec", "Status"} {
			field, ok := typ.FieldByName(part)
			if !ok {
				continue
			}
			var want []string
			for i := range field.Type.NumField() {
				name, _, _ := strings.Cut(field.Type.Field(i).Tag.Get("json"), ",")
				if name != "" && name != "-" {
					want = append(want, name)
				}
			}
			got := slices.Collect(maps.Keys(v.Schema.OpenAPIV3Schema.Properties[strings.ToLower(part)].Properties))
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("kind %s %s: the CRD's %s fields are %v, the Go type's %v (run make manifests)", kind, v.Name, strings.ToLower(part), got, want)
			}
		}
	}
}
