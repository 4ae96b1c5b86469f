package sandbox

import (
	"os"
	"syscall"
)

// fdatasync forces f's data, and the size needed to read it back, to disk
// (not its other metadata, which fsync also writes).
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
