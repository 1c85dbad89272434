// Package optest runs lab's reference operator against a real control plane
// for tests: one control plane per test binary (Main), and per test a fresh
// namespace, a manager whose cache sees only that namespace, the operator
// with its own event bus, a recorder of every event, and a direct
// (uncached, unobserved) client for the test's own reads and writes.
package optest
