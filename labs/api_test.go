package labs_test

import (
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/operator/api/v1alpha1"
	"github.com/operator-lab/lab/operator/crds"
)

// apiLab is minimalLab using the operator's HelloWorld API in its own group.
func apiLab() fstest.MapFS {
	m := minimalLab()
	m["lab.yaml"].Data = []byte(strings.Replace(string(m["lab.yaml"].Data), "exercises:",
		"api: {group: learn.operator-lab.dev, kinds: [HelloWorld]}\ncommon: [api/v1alpha1/groupversion_info.go]\nexercises:", 1))
	m["_common/api/v1alpha1/groupversion_info.go"] = &fstest.MapFile{Data: []byte(
		"package v1alpha1\n\nvar GroupVersion = schema.GroupVersion{Group: \"learn.operator-lab.dev\", Version: \"v1alpha1\"}\n")}
	return m
}

// TestAPILabGetsTheOperatorsTypesAndSchema: a lab with `api:` hands its
// workspace the operator's own API files, byte for byte, and installs the
// operator's CRD for each kind with only the group (and so the name) moved.
func TestAPILabGetsTheOperatorsTypesAndSchema(t *testing.T) {
	lab, err := labs.Load(apiLab())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"api/v1alpha1/helloworld_types.go", "api/v1alpha1/conditions.go", "api/v1alpha1/groupversion_info.go"} {
		got, err := lab.SharedFile(f)
		if err != nil {
			t.Fatalf("shared file %s: %v", f, err)
		}
		if want, err := fs.ReadFile(v1alpha1.Sources, strings.TrimPrefix(f, "api/v1alpha1/")); err == nil && string(got) != string(want) {
			t.Errorf("%s is not the operator's file", f)
		}
	}
	mine, err := lab.CustomResourceDefinitions()
	if err != nil {
		t.Fatal(err)
	}
	all, err := crds.All()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(all, func(c *apiextensionsv1.CustomResourceDefinition) bool { return c.Spec.Names.Kind == "HelloWorld" })
	if len(mine) != 1 || i < 0 {
		t.Fatalf("the lab has %d CRDs; the operator's HelloWorld CRD found: %v", len(mine), i >= 0)
	}
	if got := mine[0]; got.Name != "helloworlds.learn.operator-lab.dev" || got.Spec.Group != "learn.operator-lab.dev" {
		t.Errorf("moved CRD: name %s, group %s", got.Name, got.Spec.Group)
	}
	if !reflect.DeepEqual(mine[0].Spec.Versions, all[i].Spec.Versions) {
		t.Error("the lab's HelloWorld schema differs from the operator's")
	}
}

func TestAPILabValidates(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(fstest.MapFS)
		want   string
	}{
		{"own type file", func(m fstest.MapFS) {
			m["lab.yaml"].Data = []byte(strings.Replace(string(m["lab.yaml"].Data), "common: [api/v1alpha1/groupversion_info.go]",
				"common: [api/v1alpha1/groupversion_info.go, api/v1alpha1/greeting_types.go]", 1))
			m["_common/api/v1alpha1/greeting_types.go"] = &fstest.MapFile{Data: []byte("package v1alpha1\n")}
		}, "the API's files are the operator's"},
		{"group not declared", func(m fstest.MapFS) {
			m["_common/api/v1alpha1/groupversion_info.go"].Data = []byte("package v1alpha1\n")
		}, "does not declare the group"},
		{"the operator's group", func(m fstest.MapFS) {
			m["lab.yaml"].Data = []byte(strings.Replace(string(m["lab.yaml"].Data), "group: learn.operator-lab.dev", "group: lab.operator-lab.dev", 1))
		}, "a group other than the operator's"},
		{"unknown kind", func(m fstest.MapFS) {
			m["lab.yaml"].Data = []byte(strings.Replace(string(m["lab.yaml"].Data), "kinds: [HelloWorld]", "kinds: [Greeting]", 1))
		}, `no CRD for kind "Greeting"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := apiLab()
			c.break_(m)
			_, err := labs.Load(m)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Load error = %v, want one containing %q", err, c.want)
			}
		})
	}
}
