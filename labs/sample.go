package labs

import (
	"fmt"
	"maps"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// CustomResourceDefinitions decodes the lab's CRD manifests, for installing
// on a control plane (before the checks run, or under `lab start`).
func (l *Lab) CustomResourceDefinitions() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	manifests, err := l.CRDManifests()
	if err != nil {
		return nil, err
	}
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(manifests))
	for _, m := range manifests {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(m.Data, &crd); err != nil {
			return nil, fmt.Errorf("lab %s: decode CRD %s: %w", l.ID, m.Name, err)
		}
		out = append(out, &crd)
	}
	return out, nil
}

// SampleKind is the kind of the runner's sample objects (the ones `lab
// start --mine` makes for the learner's controller), with the group and
// storage version of the lab's CRD for it.
func (l *Lab) SampleKind() (schema.GroupVersionKind, error) {
	if l.Runner == nil {
		return schema.GroupVersionKind{}, fmt.Errorf("lab %s has no runner for --mine", l.ID)
	}
	crds, err := l.CustomResourceDefinitions()
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	for _, crd := range crds {
		if crd.Spec.Names.Kind != l.Runner.Sample.Kind {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Storage {
				return schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}, nil
			}
		}
	}
	return schema.GroupVersionKind{}, fmt.Errorf("lab %s: no CRD serves the runner's sample kind %s", l.ID, l.Runner.Sample.Kind)
}

// New is the n-th sample object (Name, Name-2, Name-3, …) of kind gvk (the
// lab's SampleKind) in namespace; invalid takes the spec the controller must
// give up on.
func (s Sample) New(gvk schema.GroupVersionKind, namespace string, n int, invalid bool) (*unstructured.Unstructured, error) {
	spec := maps.Clone(s.Spec)
	if invalid {
		if s.Invalid == nil {
			return nil, fmt.Errorf("the runner's sample %s has no invalid spec", s.Name)
		}
		maps.Copy(spec, s.Invalid)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(namespace)
	u.SetName(s.Name)
	if n > 1 {
		u.SetName(fmt.Sprintf("%s-%d", s.Name, n))
	}
	return u, nil
}

// Change makes the spec change the lab declares (Update) to a sample
// object: a number goes up by one, text gets a new edit number. It returns
// what changed, for the live view ("storageGB → 3").
func (s Sample) Change(u *unstructured.Unstructured) (string, error) {
	field := strings.TrimPrefix(s.Update, "spec.")
	value, found, err := unstructured.NestedFieldNoCopy(u.Object, "spec", field)
	if err != nil || !found {
		return "", fmt.Errorf("%s has no spec.%s to change", u.GetName(), field)
	}
	var next any
	switch v := value.(type) {
	case int64:
		next = v + 1
	case float64:
		next = v + 1
	case string:
		base, _, _ := strings.Cut(v, " (edit ")
		next = fmt.Sprintf("%s (edit %d)", base, u.GetGeneration()+1)
	default:
		return "", fmt.Errorf("spec.%s is a %T; only numbers and text can be changed", field, value)
	}
	if err := unstructured.SetNestedField(u.Object, next, "spec", field); err != nil {
		return "", fmt.Errorf("set spec.%s: %w", field, err)
	}
	return fmt.Sprintf("%s → %v", field, next), nil
}
