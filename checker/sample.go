package checker

import (
	"fmt"
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/operator-lab/lab/labs"
)

// SampleKind is the kind of the objects `lab start --mine` makes for the
// learner's controller, with the group and served version of its CRD.
func SampleKind(lab *labs.Lab) (schema.GroupVersionKind, error) {
	if lab.Runner == nil {
		return schema.GroupVersionKind{}, fmt.Errorf("lab %s has no runner for --mine", lab.ID)
	}
	crds, err := CRDs(lab)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	for _, crd := range crds {
		if crd.Spec.Names.Kind != lab.Runner.Sample.Kind {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Storage {
				return schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}, nil
			}
		}
	}
	return schema.GroupVersionKind{}, fmt.Errorf("lab %s: no CRD serves the runner's sample kind %s", lab.ID, lab.Runner.Sample.Kind)
}

// NewSample is the n-th sample object (name, name-2, name-3, …) in
// namespace; invalid takes the spec the controller must give up on.
func NewSample(lab *labs.Lab, gvk schema.GroupVersionKind, namespace string, n int, invalid bool) (*unstructured.Unstructured, error) {
	s := lab.Runner.Sample
	spec := maps.Clone(s.Spec)
	if invalid {
		if s.Invalid == nil {
			return nil, fmt.Errorf("lab %s's runner has no invalid sample", lab.ID)
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

// ChangeSample makes the sample's spec change the lab declares: a number
// goes up by one, text gets a new edit number. It returns what changed,
// for the live view ("storageGB → 3").
func ChangeSample(lab *labs.Lab, u *unstructured.Unstructured) (string, error) {
	field := strings.TrimPrefix(lab.Runner.Sample.Update, "spec.")
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
