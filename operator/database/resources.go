package database

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/operator-lab/lab/operator/api/v1alpha1"
	"github.com/operator-lab/lab/operator/world"
)

// Names and keys of what the controller creates for a Database.
const (
	containerName = "database"
	portName      = "postgres"
	port          = 5432
	volumeName    = "data"

	SecretKeyUsername = "username"
	SecretKeyPassword = "password"
	SecretKeyDatabase = "database"
	SecretKeyEndpoint = "endpoint"
)

// SecretName is the name of the credentials Secret of the Database named name.
func SecretName(name string) string { return name + "-credentials" }

// WorkloadName is the name of the StatefulSet of the Database named name.
func WorkloadName(name string) string { return name }

func selectorLabels(db *v1alpha1.Database) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":     "database",
		"app.kubernetes.io/instance": db.Name,
	}
}

// mutateSecret sets the fields of the credentials Secret the controller
// owns. The password is generated once and then kept.
func mutateSecret(secret *corev1.Secret, db *v1alpha1.Database) error {
	if secret.Data == nil {
		secret.Data = map[string][]byte{}
	}
	secret.Type = corev1.SecretTypeOpaque
	secret.Data[SecretKeyUsername] = []byte(db.Spec.Username)
	secret.Data[SecretKeyDatabase] = []byte(db.Spec.DatabaseName)
	secret.Data[SecretKeyEndpoint] = []byte(db.Status.Endpoint)
	if len(secret.Data[SecretKeyPassword]) == 0 {
		password, err := newPassword()
		if err != nil {
			return err
		}
		secret.Data[SecretKeyPassword] = password
	}
	return nil
}

func newPassword() ([]byte, error) {
	raw := make([]byte, 18)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("generate a password: %w", err)
	}
	return []byte(base64.RawURLEncoding.EncodeToString(raw)), nil
}

// mutateWorkload sets the fields of the StatefulSet the controller owns,
// leaving everything the API server defaulted alone; immutable fields
// (selector, service name, volume claim templates) are set only on creation.
func mutateWorkload(sts *appsv1.StatefulSet, db *v1alpha1.Database, storage resource.Quantity) {
	labels := selectorLabels(db)
	if sts.Labels == nil {
		sts.Labels = map[string]string{}
	}
	for k, v := range labels {
		sts.Labels[k] = v
	}
	sts.Labels[world.ManagedByLabel] = world.ManagedByValue

	if sts.CreationTimestamp.IsZero() {
		sts.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
		sts.Spec.ServiceName = db.Name
		sts.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
			ObjectMeta: metav1.ObjectMeta{Name: volumeName},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceStorage: storage},
				},
			},
		}}
	}
	replicas := db.Spec.Replicas
	sts.Spec.Replicas = &replicas

	tmpl := &sts.Spec.Template
	if tmpl.Labels == nil {
		tmpl.Labels = map[string]string{}
	}
	for k, v := range labels {
		tmpl.Labels[k] = v
	}

	c := container(&tmpl.Spec)
	c.Image = db.Spec.Image
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != port {
		c.Ports = []corev1.ContainerPort{{Name: portName, ContainerPort: port, Protocol: corev1.ProtocolTCP}}
	}
	c.Env = []corev1.EnvVar{
		secretEnv("POSTGRES_USER", db.Name, SecretKeyUsername),
		secretEnv("POSTGRES_PASSWORD", db.Name, SecretKeyPassword),
		secretEnv("POSTGRES_DB", db.Name, SecretKeyDatabase),
	}
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].Name != volumeName {
		c.VolumeMounts = []corev1.VolumeMount{{Name: volumeName, MountPath: "/var/lib/postgresql/data"}}
	}
}

// container returns the database container of a pod spec, adding it if missing.
func container(spec *corev1.PodSpec) *corev1.Container {
	for i := range spec.Containers {
		if spec.Containers[i].Name == containerName {
			return &spec.Containers[i]
		}
	}
	spec.Containers = append(spec.Containers, corev1.Container{Name: containerName})
	return &spec.Containers[len(spec.Containers)-1]
}

func secretEnv(name, dbName, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: SecretName(dbName)},
		Key:                  key,
	}}}
}

// workloadReady reports whether the StatefulSet has rolled out its current
// spec: the status describes the current generation and every replica is
// updated and ready.
func workloadReady(sts *appsv1.StatefulSet) bool {
	want := int32(1)
	if sts.Spec.Replicas != nil {
		want = *sts.Spec.Replicas
	}
	st := sts.Status
	return st.ObservedGeneration >= sts.Generation && st.ReadyReplicas == want && st.UpdatedReplicas == want
}
