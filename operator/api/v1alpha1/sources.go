package v1alpha1

import "embed"

// Sources holds the files that define the kinds, their fields, phases,
// condition types and reasons. A lab whose exercises use the reference
// operator's API (lab.yaml `api:`) gets exactly these files in its
// workspace, next to a groupversion_info.go of its own, so the learner's
// types are the operator's types and not a copy that can drift.
//
//go:embed conditions.go database_types.go helloworld_types.go transitions.go zz_generated.deepcopy.go
var Sources embed.FS
