//go:build unix

package freeport

import (
	"os"
	"syscall"
)

// lock takes f's lock without waiting; it is released when f is closed or
// the process exits.
func lock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
