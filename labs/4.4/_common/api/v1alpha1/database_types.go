package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Phase is where a Database is in its life: Pending → Provisioning →
// Configuring → Deploying → Verifying → Ready, with Failed and Updating
// on the side.
// +kubebuilder:validation:Enum=Pending;Provisioning;Configuring;Deploying;Verifying;Ready;Failed;Updating
type Phase string

// The phases.
const (
	PhasePending      Phase = "Pending"
	PhaseProvisioning Phase = "Provisioning"
	PhaseConfiguring  Phase = "Configuring"
	PhaseDeploying    Phase = "Deploying"
	PhaseVerifying    Phase = "Verifying"
	PhaseReady        Phase = "Ready"
	PhaseFailed       Phase = "Failed"
	PhaseUpdating     Phase = "Updating"
)

// DatabaseSpec is the database the user asks for.
type DatabaseSpec struct {
	// Engine is the database engine, e.g. postgres.
	// +kubebuilder:validation:MinLength=1
	Engine string `json:"engine"`
	// Version is the engine version.
	// +optional
	Version string `json:"version,omitempty"`
	// StorageGB is the size of the volume.
	// +optional
	StorageGB int32 `json:"storageGB,omitempty"`
}

// DatabaseStatus is what the controller observed and did.
type DatabaseStatus struct {
	// Phase is the current step of the state machine.
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// PhaseSince is when the current phase began.
	// +optional
	PhaseSince *metav1.Time `json:"phaseSince,omitempty"`
	// FailedPhase is the phase that failed, while Phase is Failed.
	// +optional
	FailedPhase Phase `json:"failedPhase,omitempty"`
	// Attempts counts consecutive failures of the current step; the
	// backoff grows with it, and it survives watch events and restarts.
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// ObservedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Endpoint is where the database answers once provisioned.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Database is a database the controller provisions in an external system.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
type Database struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   DatabaseSpec   `json:"spec,omitempty"`
	Status DatabaseStatus `json:"status,omitempty"`
}

// DatabaseList is a list of Databases.
//
// +kubebuilder:object:root=true
type DatabaseList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Database `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Database{}, &DatabaseList{})
}
