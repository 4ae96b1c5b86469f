package fsstore

import (
	"time"
)

// Long read sections and the writers behind them.
//
// sync.RWMutex stops admitting readers as soon as a writer waits, so that
// writers are not starved. A writer that waits for a long read section —
// a commit checking its writes' rules under the read lock, which for a
// document with a 100,000-element list and a rule calling hasAll on it
// takes a good part of a second — therefore holds every other read for
// as long: #34 measured single light reads waiting 250–450 ms behind the
// group commit publishing the previous commit. The store's own writers
// (the group commit's publish) instead wait for the long sections to end
// without holding the readers up, and take the lock the usual way once
// none is running: the wait they add to themselves is the one they had
// (they could not have the lock before the section ended anyway).

// RLockLong takes the read lock for a section that may last long (a
// commit's rules evaluation). RUnlockLong ends it.
func (s *Store) RLockLong() {
	s.longReads.Add(1)
	s.RLock()
}

// RUnlockLong ends a section RLockLong began.
func (s *Store) RUnlockLong() {
	s.RUnlock()
	s.longReads.Add(-1)
}

// maxPoliteWait bounds how long a writer polls beside long read
// sections: long sections that keep overlapping one another would
// otherwise keep the writer (and every commit behind it) out for as long
// as they keep coming. Past it, the writer queues as RWMutex writers do.
const maxPoliteWait = 100 * time.Millisecond

// lockBesideLongReads takes the write lock. While long read sections run
// it polls with TryLock, which, unlike Lock, does not stop other readers
// from entering, for at most maxPoliteWait.
func (s *Store) lockBesideLongReads() {
	wait := 50 * time.Microsecond
	deadline := time.Now().Add(maxPoliteWait)
	for s.longReads.Load() > 0 && time.Now().Before(deadline) {
		if s.TryLock() {
			return
		}
		s.politeWaits.Add(1)
		time.Sleep(wait)
		wait = min(2*wait, 2*time.Millisecond)
	}
	s.Lock()
}
