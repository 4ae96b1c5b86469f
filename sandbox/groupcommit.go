package sandbox

import (
	"errors"
	"fmt"
	"sync"

	"github.com/pyric/pyric/sandbox/service"
)

// Group commit of the Logs' appends. An acknowledged append must be in
// the operating system's hands (written, not necessarily synced) before
// it returns, and a write() costs more than the record it carries, so
// concurrent appends share one: each append puts its record in the
// forming group (walQueue.forming); the append that started the group
// (its leader) takes the group when it gets walMu — which the write of
// the group before, or a checkpoint, may hold meanwhile — numbers its
// records, writes them all with one write() (and, with SyncAlways, one
// fdatasync), and wakes the others. An append that finds no group
// forming starts one and, when walMu is free, writes at once: a lone
// writer waits for no one (no timers).
//
// Groups are written in the order they formed (a group starts forming
// only once the one before it was taken, under walMu), and a group's
// records in the order they joined it, so the log's order is the order
// in which the appends took their place in the queue; an append that
// returned before another began is before it in the log.

// queueLog queues one batch of a service's Log (record space, as
// logSpace names it) in the forming group and returns its wait: the
// group's writer when it started the group (the leader), else the
// group. A batch too large for a record is applied to the bbolt file
// here, and its wait has nothing left to do.
func (s *Store) queueLog(space string, changes []service.LogChange) (service.LogWait, error) {
	if p := s.syncErr.Load(); p != nil {
		// The disk refused a sync: what was acknowledged since may not be
		// durable; stop acknowledging more.
		return nil, fmt.Errorf("the data file could not be synced to disk: %w", *p)
	}
	n, size := 0, 0
	for _, c := range changes {
		n += len(c.Value)
		size += len(c.Key) + len(c.Value) + 16
	}
	if size+len(space)+64 > walMaxRecord {
		return walWritten{}, s.applyDirect(space, changes)
	}
	// The records stay in memory until a checkpoint applies them, and
	// the values are only the caller's during this call: they are copied
	// into one block per batch.
	batch := walBatch{db: space, changes: make([]walChange, len(changes))}
	slab := make([]byte, 0, n)
	for i, c := range changes {
		wc := walChange{space: changeSpace(c), path: c.Key, prefix: c.Prefix && c.Value == nil}
		if c.Value != nil {
			at := len(slab)
			slab = append(slab, c.Value...)
			wc.data = slab[at:len(slab):len(slab)]
		}
		batch.changes[i] = wc
	}
	g, leader, err := s.enqueue(batch, size)
	if err != nil {
		return nil, err
	}
	if leader {
		return (*walLeader)(g), nil
	}
	return g, nil
}

// Wait is a group member's wait: for the leader's write.
func (g *walGroup) Wait() error { return g.s.walQ.wait(g) }

// walLeader is the wait of a group's first member, which writes it.
type walLeader walGroup

// Wait writes the group, then waits as every member does.
func (l *walLeader) Wait() error {
	g := (*walGroup)(l)
	g.s.writeGroup(g)
	return g.Wait()
}

// walWritten is the wait of a batch already durable when queued.
type walWritten struct{}

func (walWritten) Wait() error { return nil }

// walQueue is the forming group and the groups kept for reuse.
type walQueue struct {
	mu      sync.Mutex
	forming *walGroup
	free    []*walGroup
}

// walGroup is the records of appends that share one write.
type walGroup struct {
	s *Store
	// buf holds the framed records, their sequences and checksums unset
	// until the leader numbers them (sealWALRecord); starts are where
	// each begins.
	buf     []byte
	starts  []int
	batches []walBatch
	size    int // their share of pendingBytes
	// members counts the appends in the group that have not yet read
	// its outcome; the last one to read it puts the group up for reuse.
	members int
	written bool  // the leader is done: err is the outcome
	err     error // what every member returns
	done    sync.Cond
}

// walGroupKeep bounds the buffer a group keeps for reuse: a huge
// record's need not stay allocated.
const walGroupKeep = 1 << 20

// enqueue puts batch (size: its share of pendingBytes) into the forming
// group, starting one when none is forming (leader). It encodes the
// record here, once, without its sequence.
func (s *Store) enqueue(batch walBatch, size int) (g *walGroup, leader bool, err error) {
	q := &s.walQ
	q.mu.Lock()
	defer q.mu.Unlock()
	g = q.forming
	if g == nil {
		if n := len(q.free); n > 0 {
			g, q.free = q.free[n-1], q.free[:n-1]
		} else {
			g = &walGroup{s: s}
			g.done.L = &q.mu
		}
		leader = true
	}
	at := len(g.buf)
	g.buf = appendWALRecordUnsealed(g.buf, batch.db, batch.changes)
	if len(g.buf)-at > walFrameSize+walMaxRecord {
		g.buf = g.buf[:at]
		if leader {
			q.recycle(g)
		}
		return nil, false, fmt.Errorf("the commit is too large to log (%d bytes)", len(g.buf)-at)
	}
	if leader {
		q.forming = g
	}
	g.starts = append(g.starts, at)
	g.batches = append(g.batches, batch)
	g.size += size
	g.members++
	return g, leader, nil
}

// take ends the forming of g, which its leader is about to write: the
// appends after this start the next group.
func (q *walQueue) take(g *walGroup) {
	q.mu.Lock()
	if q.forming == g {
		q.forming = nil
	}
	q.mu.Unlock()
}

// finish records the outcome of g's write and wakes its members.
func (q *walQueue) finish(g *walGroup, err error) {
	q.mu.Lock()
	g.written, g.err = true, err
	if g.members > 1 {
		g.done.Broadcast()
	}
	q.mu.Unlock()
}

// wait returns the outcome of g's write once its leader wrote it.
func (q *walQueue) wait(g *walGroup) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for !g.written {
		g.done.Wait()
	}
	err := g.err
	if g.members--; g.members == 0 {
		q.recycle(g)
	}
	return err
}

// recycle keeps g for a later group; callers hold q.mu.
func (q *walQueue) recycle(g *walGroup) {
	if cap(g.buf) > walGroupKeep {
		g.buf = nil
	}
	clear(g.batches) // the changes belong to pending now
	g.buf, g.starts, g.batches = g.buf[:0], g.starts[:0], g.batches[:0]
	g.size, g.members, g.written, g.err = 0, 0, false, nil
	q.free = append(q.free, g)
}

// writeGroup is a leader's part: it takes g once walMu is free, writes
// it to the log and reports the outcome to its members.
func (s *Store) writeGroup(g *walGroup) {
	s.walMu.Lock()
	s.walQ.take(g)
	err := s.writeRecords(g)
	s.walMu.Unlock()
	s.walQ.finish(g, err)
}

// writeRecords numbers g's records from nextSeq, appends them to the log
// with one write (and, with SyncAlways, one fdatasync), and adds them to
// the records the next checkpoint applies; callers hold walMu.
func (s *Store) writeRecords(g *walGroup) error {
	if p := s.syncErr.Load(); p != nil {
		// An earlier write failed, and may have left part of a record:
		// nothing goes after it.
		return fmt.Errorf("the data file could not be synced to disk: %w", *p)
	}
	if s.wal == nil {
		return errors.New("the store is closed")
	}
	for i, at := range g.starts {
		end := len(g.buf)
		if i+1 < len(g.starts) {
			end = g.starts[i+1]
		}
		g.batches[i].seq = s.nextSeq + uint64(i)
		sealWALRecord(g.buf[at:end], g.batches[i].seq)
	}
	wrote, err := s.wal.Write(g.buf)
	s.walWrites.Add(1)
	s.walSize += int64(wrote)
	if err != nil {
		// A partial record may be in the log: stop here rather than
		// append after it (the next open drops a torn last record).
		err = fmt.Errorf("write the write-ahead log: %w", err)
		s.syncErr.Store(&err)
		return err
	}
	if s.mode == SyncAlways {
		if err := fdatasync(s.wal); err != nil {
			err = fmt.Errorf("sync the write-ahead log: %w", err)
			s.syncErr.Store(&err)
			return err
		}
	}
	s.nextSeq += uint64(len(g.starts))
	s.pending = append(s.pending, g.batches...)
	s.pendingBytes += g.size
	if s.pendingBytes > walCheckpointBytes {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
	return nil
}
