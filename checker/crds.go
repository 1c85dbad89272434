package checker

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/operator-lab/lab/labs"
)

// CRDs decodes the lab's CRD manifests, for installing on the control plane
// before the checks run.
func CRDs(lab *labs.Lab) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	manifests, err := lab.CRDManifests()
	if err != nil {
		return nil, err
	}
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(manifests))
	for i, m := range manifests {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(m, &crd); err != nil {
			return nil, fmt.Errorf("lab %s: decode CRD %s: %w", lab.ID, lab.CRDs[i], err)
		}
		out = append(out, &crd)
	}
	return out, nil
}
