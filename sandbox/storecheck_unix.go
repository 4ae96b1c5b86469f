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

// mapFile maps f's size bytes read-only, every page at once where the
// system can (mapPopulate); nil when it cannot (the check
// then reads the file).
func mapFile(f *os.File, size int64) ([]byte, func()) {
	if size <= 0 || int64(int(size)) != size {
		return nil, nil
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED|mapPopulate)
	if err != nil {
		return nil, nil
	}
	return m, func() { _ = syscall.Munmap(m) }
}
