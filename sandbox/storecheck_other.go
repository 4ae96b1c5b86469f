//go:build !unix

package sandbox

import "os"

// lockedElsewhere cannot tell on this platform; the check then reads a file
// another process may be writing, which bbolt's own lock reports anyway.
func lockedElsewhere(*os.File) bool { return false }

// mapFile does not map on this platform: the check reads the file.
func mapFile(*os.File, int64) ([]byte, func()) { return nil, nil }
