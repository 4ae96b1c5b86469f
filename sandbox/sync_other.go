//go:build !linux

package sandbox

import "os"

// fdatasync forces f to disk; without fdatasync here, with fsync.
func fdatasync(f *os.File) error { return f.Sync() }
