// Package v1alpha1 is the reference operator's API — HelloWorld, the kind
// lab 3.1's exercises reconcile, with its schema, field for field — in a
// group of the exercises' own, learn.operator-lab.dev, so that your objects
// and the reference operator's stay apart on one control plane. Every other
// file of this package is the operator's (operator/api/v1alpha1), copied
// as it is: do not edit them.
//
// +kubebuilder:object:generate=true
// +groupName=learn.operator-lab.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the API group and version of every type in this package.
	GroupVersion = schema.GroupVersion{Group: "learn.operator-lab.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the types of this package (objectTypes) with
	// a scheme. apimachinery's builder, as an API package should depend on
	// little more than apimachinery.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds this package's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// objectTypes are the kinds of this package, with their lists: each type's
// file adds its own in an init function.
var objectTypes []runtime.Object

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, objectTypes...)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
