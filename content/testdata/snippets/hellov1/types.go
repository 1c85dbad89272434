// Package v1 is the HelloWorld API (hello.example.com/v1) the lesson 3.1
// snippets are compiled against.
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	GroupVersion  = schema.GroupVersion{Group: "hello.example.com", Version: "v1"}
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	AddToScheme   = SchemeBuilder.AddToScheme
)

func init() { SchemeBuilder.Register(&HelloWorld{}, &HelloWorldList{}) }

type HelloWorldSpec struct {
	Message string `json:"message"`
	Count   int32  `json:"count"`
}

type HelloWorldStatus struct {
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
}

type HelloWorld struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              HelloWorldSpec   `json:"spec,omitempty"`
	Status            HelloWorldStatus `json:"status,omitempty"`
}

type HelloWorldList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HelloWorld `json:"items"`
}

func (in *HelloWorld) DeepCopy() *HelloWorld {
	out := *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Status.Conditions = make([]metav1.Condition, len(in.Status.Conditions))
	for i := range in.Status.Conditions {
		in.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
	}
	return &out
}

func (in *HelloWorld) DeepCopyObject() runtime.Object { return in.DeepCopy() }

func (in *HelloWorldList) DeepCopyObject() runtime.Object {
	out := *in
	out.Items = make([]HelloWorld, len(in.Items))
	for i := range in.Items {
		out.Items[i] = *in.Items[i].DeepCopy()
	}
	return &out
}
