package storage

import (
	"sync"
	"sync/atomic"
)

// Commits waiting for the log. With a queued log (service.QueuedLog) an
// upload, a metadata change (an update, a token added or revoked) or a
// delete queues its record under e.mu, in the order of the engine's
// state, puts the new object in that state, and waits for the record to
// be durable after releasing e.mu, so that the records of concurrent
// uploads share one write of the log. Until that wait returns the object
// is pending: the upload is not acknowledged and its events are not yet
// emitted, and nothing else acts on the object or shows it —
//
//   - an operation on the same object (a read, another upload, a
//     metadata change, a delete) waits until it is settled (lockSettled,
//     rlockSettled), so it never builds on a version the log may lose,
//     and the object's events keep the order of its changes;
//   - a listing, a capture's or a snapshot's view of every object shows
//     the version before it (visible), or nothing for a new one;
//   - a reset or restore waits for every pending commit (lockAllSettled).
//
// A wait that fails (the log could not be written: the store then
// refuses every later record, see sandbox's writeRecords) puts back the
// version before (rollback): the state never keeps an object the log
// lost.

// objectID names an object in the pending set.
type objectID struct{ bucket, name string }

// pendingCommit is what a pending commit replaced.
type pendingCommit struct {
	// prev is the version before (nil: the object is new); a delete's is
	// the object deleted, which stays in the state, and its blob, until
	// the record is durable (settleDelete).
	prev *Object
	// newBucket: the commit made its bucket appear (it had no object and
	// was not created); a rollback takes it away again if still empty.
	newBucket bool
	// sameBlob: the commit changed prev's metadata only, the new version
	// reading prev's blob, which neither its settling nor its rollback
	// removes.
	sameBlob bool
}

// pendingSet is the engine's pending commits.
type pendingSet struct {
	n       atomic.Int32 // len(objs), for the lock-free check of an idle set
	mu      sync.Mutex
	settled sync.Cond // broadcast when a commit leaves the set
	objs    map[objectID]pendingCommit
}

// add makes id pending; callers hold e.mu (write) and id is not pending.
func (p *pendingSet) add(id objectID, c pendingCommit) {
	p.mu.Lock()
	if p.objs == nil {
		p.objs = map[objectID]pendingCommit{}
		p.settled.L = &p.mu
	}
	p.objs[id] = c
	p.n.Store(int32(len(p.objs)))
	p.mu.Unlock()
}

// done settles id and wakes those waiting for it.
func (p *pendingSet) done(id objectID) {
	p.mu.Lock()
	delete(p.objs, id)
	p.n.Store(int32(len(p.objs)))
	p.settled.Broadcast()
	p.mu.Unlock()
}

// get is id's pending commit, if any.
func (p *pendingSet) get(id objectID) (pendingCommit, bool) {
	if p.n.Load() == 0 {
		return pendingCommit{}, false
	}
	p.mu.Lock()
	c, ok := p.objs[id]
	p.mu.Unlock()
	return c, ok
}

// wait returns once id is not pending (or, with all, once nothing is).
func (p *pendingSet) wait(id objectID, all bool) {
	p.mu.Lock()
	for {
		if _, ok := p.objs[id]; !ok && (!all || len(p.objs) == 0) {
			break
		}
		p.settled.Wait()
	}
	p.mu.Unlock()
}

// lockSettled takes e.mu for writing once the object is not pending.
func (e *Engine) lockSettled(bkt, name string) {
	id := objectID{bkt, name}
	for {
		e.mu.Lock()
		if _, ok := e.pending.get(id); !ok {
			return
		}
		e.mu.Unlock()
		e.pending.wait(id, false)
	}
}

// rlockSettled takes e.mu for reading once the object is not pending.
func (e *Engine) rlockSettled(bkt, name string) {
	id := objectID{bkt, name}
	for {
		e.mu.RLock()
		if _, ok := e.pending.get(id); !ok {
			return
		}
		e.mu.RUnlock()
		e.pending.wait(id, false)
	}
}

// lockAllSettled takes e.mu for writing once no commit is pending.
func (e *Engine) lockAllSettled() {
	for {
		e.mu.Lock()
		if e.pending.n.Load() == 0 {
			return
		}
		e.mu.Unlock()
		e.pending.wait(objectID{}, true)
	}
}

// visible is what a view of every object shows of o, the stored object
// of bkt/name: o, or while o's commit is pending the version before it
// (nil: none). Callers hold e.mu.
func (e *Engine) visible(bkt, name string, o *Object) *Object {
	if c, ok := e.pending.get(objectID{bkt, name}); ok {
		return c.prev
	}
	return o
}

// rollback puts back what a pending commit of o (not a delete's, which
// changed nothing yet) replaced, its log record
// lost; e.mu is not held. Nothing else changed the object meanwhile (it
// was pending), so o is still the stored one.
func (e *Engine) rollback(o *Object, c pendingCommit) {
	e.mu.Lock()
	b := e.buckets[o.Bucket]
	if b != nil && b.objects[o.Name] == o {
		if c.prev != nil {
			b.put(c.prev)
		} else {
			b.del(o.Name)
			if c.newBucket && len(b.objects) == 0 {
				delete(e.buckets, o.Bucket)
			}
		}
	}
	e.mu.Unlock()
	if !c.sameBlob {
		e.blobs.remove(o.Generation)
	}
}
