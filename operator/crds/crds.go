package crds

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed *.yaml
var manifests embed.FS

// embedded is one embedded manifest: its file name, its YAML as generated,
// and the CRD decoded from it.
type embedded struct {
	file string
	data []byte
	crd  *apiextensionsv1.CustomResourceDefinition
}

// decodeAll reads and decodes every embedded manifest, ordered by file name.
func decodeAll() ([]embedded, error) {
	names, err := fs.Glob(manifests, "*.yaml")
	if err != nil {
		return nil, fmt.Errorf("list embedded CRD manifests: %w", err)
	}
	sort.Strings(names)
	out := make([]embedded, 0, len(names))
	for _, name := range names {
		data, err := manifests.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read embedded CRD %s: %w", name, err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("decode embedded CRD %s: %w", name, err)
		}
		out = append(out, embedded{name, data, crd})
	}
	return out, nil
}

// All returns the operator's CRDs, decoded from the embedded manifests, in a
// stable order (by file name). Each call returns fresh objects the caller may
// modify.
func All() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	all, err := decodeAll()
	if err != nil {
		return nil, err
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, len(all))
	for i, m := range all {
		crds[i] = m.crd
	}
	return crds, nil
}

// Manifest returns the embedded manifest (YAML, as generated) of the CRD for
// kind, and its file name.
func Manifest(kind string) (file string, data []byte, err error) {
	all, err := decodeAll()
	if err != nil {
		return "", nil, err
	}
	for _, m := range all {
		if m.crd.Spec.Names.Kind == kind {
			return m.file, m.data, nil
		}
	}
	return "", nil, fmt.Errorf("the reference operator has no CRD for kind %q", kind)
}
