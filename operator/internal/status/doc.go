// Package status helps the reference controllers change conditions the
// kubebuilder way (meta.SetStatusCondition with ObservedGeneration) and
// report each change as a "condition" event once it has been persisted.
package status
