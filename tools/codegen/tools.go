//go:build tools

// Package codegen pins the code generators lab uses (controller-gen for the
// CRD manifests and deepcopy functions of operator/api) in a module of their
// own, so their dependencies never enter lab's main go.mod.
//
// Run it from the repository root with
//
//	go run -modfile=tools/codegen/go.mod sigs.k8s.io/controller-tools/cmd/controller-gen ...
//
// or, as the Makefile does, `cd tools/codegen && go run sigs.k8s.io/controller-tools/cmd/controller-gen`.
package codegen

import (
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
)
