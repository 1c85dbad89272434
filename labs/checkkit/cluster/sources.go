package cluster

import "embed"

// Sources are this package's own Go files, which the checker copies into its
// private build of a workspace so the hidden checks can import the package.
//
//go:embed *.go
var Sources embed.FS
