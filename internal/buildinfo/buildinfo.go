// Package buildinfo holds the versions lab is built with and provides: its
// own version and the Kubernetes release of the control plane it runs.
package buildinfo

// Version is lab's version, set at build time with
// -ldflags "-X github.com/operator-lab/lab/internal/buildinfo.Version=...".
var Version = "dev"

// KubernetesVersion is the Kubernetes release of the control-plane binaries
// (kube-apiserver, kubectl) that lab provisions and runs; it matches the
// k8s.io/* v0.37 libraries that controller-runtime v0.25 is built on.
const KubernetesVersion = "1.37.2"

// EtcdVersion is the etcd release lab builds when it builds from source.
const EtcdVersion = "3.6.16"
