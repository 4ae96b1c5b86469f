//go:build tools

// Package peer only pins fake-gcs-server's version (see go.mod); the
// benchmark builds it with `go build github.com/fsouza/fake-gcs-server`
// from this directory.
package peer

import _ "github.com/fsouza/fake-gcs-server"
