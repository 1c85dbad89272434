package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GreetingSpec is what the user asks for.
type GreetingSpec struct {
	// Message is the text to deliver.
	// +kubebuilder:validation:MinLength=1
	Message string `json:"message"`

	// SecretRef names a Secret in the same namespace whose "signature" key
	// is appended to the message (used by the "Cache vs API reads" exercise).
	// +optional
	SecretRef string `json:"secretRef,omitempty"`
}

// GreetingStatus is what the controller observed.
type GreetingStatus struct {
	// ObservedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions describe the Greeting's state, e.g. Delivered.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Greeting is a message the controller delivers.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.spec.message`
type Greeting struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   GreetingSpec   `json:"spec,omitempty"`
	Status GreetingStatus `json:"status,omitempty"`
}

// GreetingList is a list of Greetings.
//
// +kubebuilder:object:root=true
type GreetingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Greeting `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Greeting{}, &GreetingList{})
}
