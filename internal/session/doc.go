// Package session runs the reference operator for one lab session — what
// `lab run` (and the TUI) need around operator.New: a cluster (a local
// control plane, reused from `lab env up` when one runs, or an existing
// cluster from a kubeconfig), a namespace of its own that is removed at the
// end, a manager whose cache sees only that namespace, an event bus, the
// switches, and a direct client for scenario drivers.
package session
