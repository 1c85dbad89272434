// Package controlplane provides the local Kubernetes control plane that every
// part of lab runs against: it finds, downloads or builds the envtest
// binaries (etcd, kube-apiserver, kubectl) into the setup-envtest store,
// starts envtest with the project's CRDs (children die with lab, even on
// SIGKILL), and manages the long-lived control plane of `lab env up`, which
// other commands reuse.
package controlplane
