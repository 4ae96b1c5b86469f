package auth

import (
	"slices"
	"sync"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/sandbox/service"
)

// Group commit. A mutation that changed records queues them in the log
// under the engine's lock (service.QueuedLog), in the order of the state,
// and waits for them outside it: the records of concurrent requests then
// share one write. What the lock no longer orders, the sequencer does:
// every commit queued while others are pending takes a place in line, and
// finishes (its events emitted, its caller answered) only after every
// earlier one did. So
//
//   - a caller is answered only once its records, and every record the
//     state it read was built on, are durable;
//   - events go out in the order of the state, as under the lock;
//   - when a record cannot be written, the log refuses every later one
//     (service.Log: after one append fails, every later one fails), so
//     that commit and every commit behind it fail with INTERNAL, and the
//     engine undoes their changes in memory, newest first, before anyone
//     reads the state again (reconcile): the state then holds exactly
//     what the log holds.

// pendingCommit is a commit waiting for its records (wait, nil when it
// wrote none) and for its turn.
type pendingCommit struct {
	wait   service.LogWait
	events []event.Event
	undos  []func()
	// behind says a commit was ahead in line when this one joined it:
	// its turn comes as a token on turn, from the commit ahead.
	behind bool
	turn   chan struct{}
}

// sequencer is the line of pending commits.
type sequencer struct {
	mu      sync.Mutex
	pending []*pendingCommit // in the order of the state
	// lost is the first error a commit's wait returned: that commit and
	// every later one failed.
	lost error
	// failed are the commits that finished failing whose changes are
	// still in memory (reconcile undoes them).
	failed []*pendingCommit
	free   []*pendingCommit
}

// busy says commits are pending; callers hold the engine's lock.
func (s *sequencer) busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending) > 0
}

// add puts the journal's events and undos, and the records' wait, in
// line; callers hold the engine's lock, so the line's order is the
// state's.
func (s *sequencer) add(wait service.LogWait, j *journal) *pendingCommit {
	s.mu.Lock()
	defer s.mu.Unlock()
	var t *pendingCommit
	if n := len(s.free); n > 0 {
		t, s.free = s.free[n-1], s.free[:n-1]
	} else {
		t = &pendingCommit{turn: make(chan struct{}, 1)}
	}
	t.wait = wait
	t.events, j.events = j.events, t.events
	t.undos, j.undos = j.undos, t.undos
	t.behind = len(s.pending) > 0
	s.pending = append(s.pending, t)
	return t
}

// finish waits for t's records and its turn, emits its events when
// every record up to its own is durable, and hands the turn on. It
// returns the log's error when t, or a commit ahead of it, failed.
func (s *sequencer) finish(t *pendingCommit, events event.Emitter) error {
	var err error
	if t.wait != nil {
		// Called first: a group's first wait is what writes the group.
		err = t.wait.Wait()
	}
	if t.behind {
		<-t.turn
	}
	s.mu.Lock()
	if err != nil && s.lost == nil {
		s.lost = err
	}
	lost := s.lost
	s.mu.Unlock()
	if lost == nil {
		for _, ev := range t.events {
			events.Emit(ev)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = slices.Delete(s.pending, 0, 1) // t: it had the turn
	if len(s.pending) > 0 {
		s.pending[0].turn <- struct{}{}
	}
	clear(t.events)
	t.events, t.wait = t.events[:0], nil
	if lost != nil {
		s.failed = append(s.failed, t)
		return persistError(lost)
	}
	clear(t.undos)
	t.undos = t.undos[:0]
	s.free = append(s.free, t)
	return nil
}

// reconcile undoes, newest first, the changes of every commit that
// failed or will fail (all those pending once one failed); callers hold
// the engine's lock, so no change is being made meanwhile.
func (s *sequencer) reconcile() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost == nil {
		return
	}
	for _, line := range [][]*pendingCommit{s.pending, s.failed} {
		for i := len(line) - 1; i >= 0; i-- {
			t := line[i]
			for k := len(t.undos) - 1; k >= 0; k-- {
				t.undos[k]()
			}
			clear(t.undos)
			t.undos = t.undos[:0]
		}
	}
	clear(s.failed)
	s.failed = s.failed[:0]
}
