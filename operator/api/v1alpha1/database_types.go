package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Phase is a step of the Database state machine.
// +kubebuilder:validation:Enum=Pending;Provisioning;Configuring;Deploying;Verifying;Ready;Failed;Updating
type Phase string

// The Database phases. The happy path is Pending → Provisioning →
// Configuring → Deploying → Verifying → Ready; a spec change on a Ready
// database goes Ready → Updating → Verifying → Ready; a failure goes to
// Failed, and a retry from Failed goes back to Provisioning.
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

// DatabaseFinalizer is the finalizer the Database controller puts on every
// Database before it provisions anything in the external system, and
// removes once the external database is deprovisioned: until then, deleting
// a Database only marks it (metadata.deletionTimestamp). A finalizer's name
// is qualified by a domain, here the API group.
var DatabaseFinalizer = GroupVersion.Group + "/deprovision"

// DatabaseSpec is what the user asks for.
type DatabaseSpec struct {
	// Image is the database server's container image.
	// +kubebuilder:default="postgres:17"
	// +kubebuilder:validation:MinLength=1
	// +optional
	Image string `json:"image,omitempty"`

	// Replicas is the number of database server pods.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// DatabaseName is the name of the database created in the external system.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	DatabaseName string `json:"databaseName"`

	// Username is the owner of the database; its password is generated into
	// the Secret named in status.secretName.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Username string `json:"username"`

	// Storage is the volume size per replica, as a Kubernetes quantity
	// ("1Gi"). It is parsed by the controller, not by the schema, so that a
	// bad value shows a permanent error in lab 4.4. Changing it on an
	// existing database has no effect (StatefulSet volume claims are immutable).
	// +kubebuilder:default="1Gi"
	// +optional
	Storage string `json:"storage,omitempty"`
}

// DatabaseStatus is what the controller observed and did. Everything the
// controller needs to resume — including its retry bookkeeping — lives here,
// so a restart or a watch event never resets it.
type DatabaseStatus struct {
	// Phase is the current step of the state machine.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// Ready is true once the database passed verification for the current spec.
	// +optional
	Ready bool `json:"ready,omitempty"`

	// Endpoint is the address the external system gave the database.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// SecretName names the owned Secret with the credentials.
	// +optional
	SecretName string `json:"secretName,omitempty"`

	// ObservedGeneration is the spec generation that last reached Ready. A
	// Ready database whose metadata.generation differs has a pending update.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Retries counts consecutive failed attempts since the last success; the
	// lesson backoff delay is computed from it.
	// +optional
	Retries int32 `json:"retries,omitempty"`

	// LastFailureTime is when the last attempt failed.
	// +optional
	LastFailureTime *metav1.MicroTime `json:"lastFailureTime,omitempty"`

	// NextRetryTime is the earliest time the controller retries from Failed.
	// Reconciles that happen earlier (a watch event, say) wait out the rest.
	// +optional
	NextRetryTime *metav1.MicroTime `json:"nextRetryTime,omitempty"`

	// Conditions: Ready, ExternalSystemAvailable, Failed.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Database is lab 4.4's resource: a database provisioned in a (simulated)
// external system and served by a StatefulSet.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=db
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Ready",type=boolean,JSONPath=`.status.ready`
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.status.endpoint`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Database struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   DatabaseSpec   `json:"spec,omitempty"`
	Status DatabaseStatus `json:"status,omitempty"`
}

// DatabaseList is a list of Database.
//
// +kubebuilder:object:root=true
type DatabaseList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Database `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Database{}, &DatabaseList{})
}
