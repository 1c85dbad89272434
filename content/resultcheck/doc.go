// Package resultcheck holds the test that keeps the lesson's claims about
// ctrl.Result honest: for every row of content.ResultCases it runs a tiny
// ConfigMap controller on a real control plane, wrapped in lab's observation
// layer, and compares the queue calls the controller really makes (and the
// delays, warnings and metrics that go with them) with what the table says.
// It has no code of its own; the test is the point.
package resultcheck
