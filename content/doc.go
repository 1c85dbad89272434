// Package content holds lab's lesson text for lessons 3.1 and 4.4, in English
// and Russian, embedded in the binary.
//
// Each lesson is one markdown file per language (lessons/<id>/<lang>.md).
// Level-two headings carry a stable section ID ("## The Manager {#manager}"),
// so the TUI and `lab read 3.1 manager` can address a section whatever the
// language. The section list and the demo each section points at (a scenario
// or switch setting of the reference operator) are declared once, in Go, in
// catalog.go; the loader checks every language file against that declaration.
// A demo also carries the switches its lesson's text assumes, so that the
// live view can set them (and put the learner's back afterwards).
//
// Render turns markdown into terminal text: prose wrapped at the width
// given, code blocks and diagrams never wrapped, tables as wide as the
// caller allows (or as lists where their words would not fit).
//
// Tables that make claims about runtime behaviour are generated from Go data
// (see ResultCases) rather than written by hand, so a test can hold the text
// to what the controller actually does.
//
// Lang picks the reader's language from a flag, LAB_LANG or the locale.
package content
