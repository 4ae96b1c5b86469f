//go:build unix

package sandbox

import (
	"os"
	"syscall"
)

// lockedElsewhere reports whether another process holds bbolt's lock on f
// (an exclusive flock while it has the store open for writing). It takes
// and at once releases a shared lock, so bbolt's own open is not delayed.
func lockedElsewhere(f *os.File) bool {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return err == syscall.EWOULDBLOCK
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}
