// Package labs holds lab's lab definitions, the single source of truth for
// every exercise: one folder per lab (3.1/, 4.4/) with a typed, versioned
// lab.yaml, the instructions in English and Russian, the files a learner
// starts from, the reference solutions, and the hidden checks. Everything is
// embedded in the lab binary; Load parses and validates it. A lab's Runner
// says how `lab start --mine` runs the learner's own controller: the
// program (internal/mine builds it) and the sample objects the live view
// creates and changes for it (Lab.SampleKind, Sample.New, Sample.Change).
//
// A lab folder looks like this:
//
//	lab.yaml                 metadata (see Lab)
//	instructions/en/ID.md    exercise instructions, one file per exercise and language
//	instructions/ru/ID.md
//	crds/*.yaml              CustomResourceDefinitions the checks need on the control plane
//	_common/...              files every workspace gets as they are (API types, manifests)
//	_starter/...             the exercise files as the learner first sees them (with TODO(lab))
//	_solution/...            the same files, solved
//	_checks/...              hidden *_test.go files, added only to the checker's private copy
//	_runner/main.go          the program that runs the learner's controller (see Runner)
//
// The underscore keeps the go tool from building the Go sources inside (they
// belong to the workspace module, not to lab's); Load still reads them, and
// rejects a lab whose files are not all declared or whose starters lack a
// TODO(lab) marker.
//
// Writing checks: a check is an external test package of the exercise's
// package. It drives the learner's code with observed dependencies
// (checkkit/cluster starts managers whose cache sees only the check's own
// namespace, since several exercises' checks run at once on one control
// plane), chooses names, durations and counts at random so that code tuned
// to the visible example fails, and reports a failure with checkkit.Expect:
// one line, "expected …, saw …", in the learner's terms. The content test
// (checker.TestLabContent) proves that every starter fails and every
// solution passes.
package labs
