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

// Long read sections that keep overlapping do not keep a writer out for
// ever: past maxPoliteWait it queues for the lock, so the next reader
// waits behind it.
func TestWriterBesideOverlappingLongReadsIsNotStarved(t *testing.T) {
	s := New(Options{})
	s.RLockLong() // never ends while the writer waits: the worst overlap
	locked := make(chan struct{})
	go func() {
		s.lockBesideLongReads()
		close(locked)
	}()
	// Once the writer gave up polling it waits in Lock, and RWMutex then
	// refuses new readers.
	for s.TryRLock() {
		s.RUnlock()
		runtime.Gosched()
	}
	select {
	case <-locked:
		t.Fatal("the writer got the lock inside a read section")
	default:
	}
	s.RUnlockLong()
	<-locked
	s.Unlock()
}
