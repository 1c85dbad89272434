package scenario

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator-lab/lab/operator/api/v1alpha1"
)

// The reference operator's sample specs: one valid spec per kind, and the
// one change that makes it invalid for good.
const (
	sampleImage   = "postgres:17"
	sampleStorage = "1Gi"
	// invalidStorage is not a quantity: the Database controller gives up.
	invalidStorage = "lots"
	sampleMessage  = "Hello, world"
	sampleCount    = 1
	// sampleSecret is the Secret every HelloWorld sample names in
	// spec.secretRef, and sampleSignature the value of its signature key:
	// the controller reads it through the API reader (from=api), as lab
	// 3.1's reads exercise teaches, and copies it into the ConfigMap.
	sampleSecret    = "hello-signature"
	sampleSignature = "-- the lab"
)

// Reference is the reference operator's samples: HelloWorlds for lab 3.1
// (with the Secret they name, a Prerequisite), Databases for 4.4.
func Reference(lab string) Samples {
	if lab == lab31 {
		return helloSamples{}
	}
	return databaseSamples{}
}

// repairer is a kind of sample whose invalid spec can be put right again,
// as the permanent-error scenarios do to show the operator recover.
type repairer interface {
	Samples
	// repair sets the spec field New(invalid) broke back to the valid sample's.
	repair(obj client.Object) (string, error)
}

type databaseSamples struct{}

func (databaseSamples) Name() string { return "orders" }

func (databaseSamples) New(namespace, name string, invalid bool) (client.Object, string, error) {
	db := &v1alpha1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: v1alpha1.DatabaseSpec{
			Image: sampleImage, Replicas: 1, DatabaseName: name, Username: "app", Storage: sampleStorage,
		},
	}
	if !invalid {
		return db, "", nil
	}
	db.Spec.Storage = invalidStorage
	return db, fmt.Sprintf("storage %q", invalidStorage), nil
}

func (databaseSamples) Empty() client.Object { return &v1alpha1.Database{} }

// Change cycles the replicas 1→2→3→1.
func (databaseSamples) Change(obj client.Object) (string, error) {
	db, ok := obj.(*v1alpha1.Database)
	if !ok {
		return "", notASample(obj)
	}
	db.Spec.Replicas = db.Spec.Replicas%3 + 1
	return fmt.Sprintf("replicas → %d", db.Spec.Replicas), nil
}

func (databaseSamples) repair(obj client.Object) (string, error) {
	db, ok := obj.(*v1alpha1.Database)
	if !ok {
		return "", notASample(obj)
	}
	db.Spec.Storage = sampleStorage
	return fmt.Sprintf("storage → %s (fixed)", sampleStorage), nil
}

type helloSamples struct{}

var _ Prerequisites = helloSamples{}

func (helloSamples) Name() string { return "hello" }

func (helloSamples) New(namespace, name string, invalid bool) (client.Object, string, error) {
	hw := &v1alpha1.HelloWorld{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       v1alpha1.HelloWorldSpec{Message: sampleMessage, Count: sampleCount, SecretRef: sampleSecret},
	}
	if !invalid {
		return hw, "", nil
	}
	// Counting past the limit is refused for good.
	hw.Spec.Count = v1alpha1.MaxHelloCount + 1
	return hw, fmt.Sprintf("count %d > %d", hw.Spec.Count, v1alpha1.MaxHelloCount), nil
}

func (helloSamples) Empty() client.Object { return &v1alpha1.HelloWorld{} }

// Prerequisites is the Secret the samples' spec.secretRef names.
func (helloSamples) Prerequisites(namespace string) []Prerequisite {
	return []Prerequisite{{
		Object: &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: sampleSecret, Namespace: namespace},
			Data:       map[string][]byte{v1alpha1.SignatureKey: []byte(sampleSignature)},
		},
		Message: "Secret the samples name in spec.secretRef",
	}}
}

// Change counts one further, back to 1 after the limit.
func (helloSamples) Change(obj client.Object) (string, error) {
	hw, ok := obj.(*v1alpha1.HelloWorld)
	if !ok {
		return "", notASample(obj)
	}
	hw.Spec.Count = hw.Spec.Count%v1alpha1.MaxHelloCount + 1
	return fmt.Sprintf("count → %d", hw.Spec.Count), nil
}

func (helloSamples) repair(obj client.Object) (string, error) {
	hw, ok := obj.(*v1alpha1.HelloWorld)
	if !ok {
		return "", notASample(obj)
	}
	hw.Spec.Count = sampleCount
	return fmt.Sprintf("count → %d (fixed)", hw.Spec.Count), nil
}

func notASample(obj client.Object) error {
	return fmt.Errorf("%s is not a sample object", obj.GetName())
}
