//go:build !unix

package freeport

import "os"

// lock is a no-op where there is no flock: ports are then distinct within
// one process only.
func lock(*os.File) error { return nil }
