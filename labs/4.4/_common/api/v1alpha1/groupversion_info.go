// Package v1alpha1 is the Database API that lab 4.4's exercises reconcile:
// the reference operator's own types (database_types.go, conditions.go,
// transitions.go — copied into your workspace from the operator, not
// written for the lab), in a group of the lab's own, learn.operator-lab.dev,
// so that your objects and the reference operator's never meet on one
// control plane. The phases, condition types, reasons and the state machine
// (CanTransition, NextPhases) are the ones `lab start 4.4` shows.
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
	// GroupVersion is the API group and version of Database.
	GroupVersion = schema.GroupVersion{Group: "learn.operator-lab.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the types of this package (objectTypes) with
	// a scheme. apimachinery's builder, as an API package should depend on
	// little more than apimachinery.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this package to a scheme.
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
