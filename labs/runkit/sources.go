package runkit

import "embed"

// Sources are this package's own Go files, which lab copies into its
// private build of a workspace so the lab's runner program can import them.
//
//go:embed *.go
var Sources embed.FS
