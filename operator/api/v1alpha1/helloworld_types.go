package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxHelloCount is the largest spec.count the HelloWorld controller accepts.
// It is checked by the controller rather than by the CRD schema on purpose:
// lab 3.1 uses it to show a permanent error (TerminalError) in action.
const MaxHelloCount = 10

// SignatureKey is the key, in the Secret a HelloWorld's spec.secretRef
// names, whose value signs the greeting (written to the ConfigMap under the
// same key).
const SignatureKey = "signature"

// HelloWorldSpec is what the user asks for.
type HelloWorldSpec struct {
	// Message is the greeting written into the ConfigMap.
	// +kubebuilder:validation:MinLength=1
	Message string `json:"message"`

	// Count is how many times the greeting is repeated (at most 10; larger
	// values are a permanent error reported in status).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=1
	// +optional
	Count int32 `json:"count,omitempty"`

	// SecretRef names a Secret in the same namespace whose "signature" key
	// signs the greeting. Secrets are not watched: the controller reads this
	// one straight from the API server.
	// +optional
	SecretRef string `json:"secretRef,omitempty"`
}

// HelloWorldStatus is what the controller observed and did.
type HelloWorldStatus struct {
	// ObservedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// ConfigMapName names the owned ConfigMap holding the rendered greeting.
	// +optional
	ConfigMapName string `json:"configMapName,omitempty"`

	// Conditions: Ready, DependencyAvailable, Failed.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// HelloWorld is lab 3.1's resource: a greeting kept in an owned ConfigMap.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=hw
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.spec.message`
// +kubebuilder:printcolumn:name="Count",type=integer,JSONPath=`.spec.count`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type HelloWorld struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   HelloWorldSpec   `json:"spec,omitempty"`
	Status HelloWorldStatus `json:"status,omitempty"`
}

// HelloWorldList is a list of HelloWorld.
//
// +kubebuilder:object:root=true
type HelloWorldList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HelloWorld `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &HelloWorld{}, &HelloWorldList{})
}
