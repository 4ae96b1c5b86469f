package fsstore

import (
	"runtime"
	"testing"
)

// A store writer that waits for a long read section (a commit's rules
// evaluation) does not hold up other readers meanwhile, as a plain
// RWMutex.Lock would; it gets the lock once the section ends.
func TestWriterBesideLongReadLetsReadersIn(t *testing.T) {
	s := New(Options{})
	s.RLockLong()
	locked := make(chan struct{})
	go func() {
		s.lockBesideLongReads()
		close(locked)
	}()
	for s.politeWaits.Load() == 0 {
		runtime.Gosched() // until the writer is waiting
	}
	for range 3 {
		if !s.TryRLock() {
			t.Fatal("a reader was held up by the writer waiting for the long read section")
		}
		s.RUnlock()
	}
	select {
	case <-locked:
		t.Fatal("the writer got the lock inside a read section")
	default:
	}
	s.RUnlockLong()
	<-locked
	if s.TryRLock() {
		t.Fatal("a reader got in while the writer holds the lock")
	}
	s.Unlock()
	if s.longReads.Load() != 0 {
		t.Fatalf("%d long reads counted after the last ended", s.longReads.Load())
	}
}
