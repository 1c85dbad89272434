// Package v1 is the Database API (database.example.com/v1) the lesson 4.4
// snippets are compiled against.
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	GroupVersion  = schema.GroupVersion{Group: "database.example.com", Version: "v1"}
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	AddToScheme   = SchemeBuilder.AddToScheme
)

func init() { SchemeBuilder.Register(&Database{}, &DatabaseList{}) }

type DatabaseSpec struct {
	Image        string `json:"image"`
	Replicas     int32  `json:"replicas"`
	DatabaseName string `json:"databaseName"`
	Username     string `json:"username"`
	StorageSize  string `json:"storageSize"`
}

type DatabaseStatus struct {
	Phase              string             `json:"phase,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Ready              bool               `json:"ready,omitempty"`
	Endpoint           string             `json:"endpoint,omitempty"`
	SecretName         string             `json:"secretName,omitempty"`
	FailedAttempts     int32              `json:"failedAttempts,omitempty"`
	LastFailureTime    *metav1.Time       `json:"lastFailureTime,omitempty"`
}

type Database struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              DatabaseSpec   `json:"spec,omitempty"`
	Status            DatabaseStatus `json:"status,omitempty"`
}

type DatabaseList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Database `json:"items"`
}

func (in *Database) DeepCopy() *Database {
	out := *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Status.Conditions = make([]metav1.Condition, len(in.Status.Conditions))
	for i := range in.Status.Conditions {
		in.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
	}
	if in.Status.LastFailureTime != nil {
		out.Status.LastFailureTime = in.Status.LastFailureTime.DeepCopy()
	}
	return &out
}

func (in *Database) DeepCopyObject() runtime.Object { return in.DeepCopy() }

func (in *DatabaseList) DeepCopyObject() runtime.Object {
	out := *in
	out.Items = make([]Database, len(in.Items))
	for i := range in.Items {
		out.Items[i] = *in.Items[i].DeepCopy()
	}
	return &out
}
