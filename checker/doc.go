// Package checker grades a learner's lab workspace. It copies the workspace
// into a private build folder (the workspace is only read), adds the lab's
// hidden checks and the observation layer they grade behaviour with, builds
// the test binaries with `go test -c`, runs them through test2json against a
// real control plane, and maps the results back to exercises: passed, failed
// (with one line naming what was expected and what was observed) or error
// (does not compile, panicked, timed out), with the learner's own file:line
// positions. Reports come as text for people, Exercism results.json (v3) and
// JUnit XML.
//
// The private build itself (NewBuild: the copy, its support module, the
// locked folders kept per workspace, BuildFiles and their removal) is shared
// with `lab start --mine`, which compiles the learner's controller in a
// build of its own (ForRunner, see internal/mine).
package checker
