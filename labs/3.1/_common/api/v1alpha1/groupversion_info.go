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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the API group and version of every type in this package.
	GroupVersion = schema.GroupVersion{Group: "learn.operator-lab.dev", Version: "v1alpha1"}

	// SchemeBuilder registers this package's types with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds this package's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
