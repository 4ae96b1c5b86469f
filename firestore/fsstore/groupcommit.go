package fsstore

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/pyric/pyric/firestore/fsvalue"
	"github.com/pyric/pyric/internal/prefault"
)

// groupCommit makes a database's commits durable in batches. A commit is
// checked and installed (invisibly: at a time after s.visible) under the
// database lock, queued, and the lock released; one flusher at a time
// takes every queued commit, hands them to the Persister as one merged
// call (one store transaction, one sync), and only then publishes them, in
// order, to readers and listeners and acknowledges them. So the database
// lock is never held across a sync, reads never wait for one, and N
// concurrent commits cost about one sync instead of N.
type groupCommit struct {
	mu    sync.Mutex
	queue []*pendingCommit
	// spare is a batch's queue, emptied, for the next queue to reuse.
	spare   []*pendingCommit
	running bool
	// buf is where the flusher (one at a time) encodes a batch's
	// documents for the Persister, reused from batch to batch.
	buf []byte
	// slab is where it keeps the encodings the store holds.
	slab encodingSlab
	// arriving counts the commits on their way to the queue (Arrive):
	// the flusher yields to them only when there are some.
	arriving atomic.Int64
}

// Arrive says a commit is on its way to Commit (being checked, its rules
// asked); call the function it returns once the commit is queued or has
// failed. A flusher about to take the queue lets such commits reach it
// first, so they share its batch; with none on their way it does not
// yield — a lone writer's yield woke an idle thread to find nothing to
// run, a good share of a sequential write's CPU.
func (s *Store) Arrive() (arrived func()) {
	s.gc.arriving.Add(1)
	return s.arrived
}

func (s *Store) arrived() { s.gc.arriving.Add(-1) }

// encodeSlab is the size of the blocks small encodings share; maxBuf
// bounds the encoding buffer kept between batches.
const (
	encodeSlab = 64 << 10
	maxBuf     = 1 << 20
)

// encode returns d's deterministic encoding (fsvalue.AppendDocument), in
// the batch's buffer; only the flusher calls it.
func (g *groupCommit) encode(d *pb.Document) ([]byte, error) {
	at := len(g.buf)
	out, err := fsvalue.AppendDocument(g.buf, d)
	if err != nil {
		return nil, err
	}
	g.buf = out
	return out[at:len(out):len(out)], nil
}

// keep returns a copy of the encoding enc (from encode) without its
// leading name field, in the slab, for the store to hold; only the
// flusher calls it.
func (g *groupCommit) keep(enc []byte) []byte { return g.slab.keep(enc) }

// encodingSlab holds document encodings without their names in shared
// blocks: small ones share a block instead of being one allocation each,
// which keeps a large database's heap compact.
type encodingSlab struct{ b []byte }

// keep returns a copy of the document encoding enc without its leading
// name field (the database's prefix and the entry's path give it back
// when decoded: for small documents the name is most of the encoding). A
// deterministic encoding lists fields by number, so the name, field 1,
// comes first; a name anywhere else stays, and decodes as itself.
func (sl *encodingSlab) keep(enc []byte) []byte {
	if num, typ, n := protowire.ConsumeTag(enc); n > 0 && num == 1 && typ == protowire.BytesType {
		if m := protowire.ConsumeFieldValue(num, typ, enc[n:]); m >= 0 {
			enc = enc[n+m:]
		}
	}
	if len(enc) > encodeSlab/8 {
		return slices.Clone(enc)
	}
	if sl.b == nil || cap(sl.b)-len(sl.b) < len(enc) { // never nil: a nil encoding is none
		sl.b = make([]byte, 0, encodeSlab)
		prefault.Slice(sl.b)
	}
	at := len(sl.b)
	sl.b = append(sl.b, enc...)
	return sl.b[at:len(sl.b):len(sl.b)]
}

// endBatch forgets the batch's encodings (the Persister and keep are done
// with them); the buffer is reused unless a big batch grew it past maxBuf.
func (g *groupCommit) endBatch(merged []Change) {
	for i := range merged {
		merged[i].Data = nil
	}
	if cap(g.buf) > maxBuf {
		g.buf = nil
	}
	g.buf = g.buf[:0]
}

// maxSpare bounds the queue kept for reuse: a burst's long queue is not
// kept.
const maxSpare = 256

// recycle keeps batch, acknowledged, as the next queue's storage (one
// allocation per batch less: most batches of a lone writer are one
// commit).
func (g *groupCommit) recycle(batch []*pendingCommit) {
	if cap(batch) > maxSpare {
		return
	}
	clear(batch)
	g.mu.Lock()
	if g.spare == nil {
		g.spare = batch[:0]
	}
	g.mu.Unlock()
}

// pendingCommit is a commit waiting to be durable.
type pendingCommit struct {
	t       time.Time
	changes []Change
	held    []Held
	// acked is done once err says how the commit ended (nil: durable):
	// a WaitGroup, unlike a channel, is no allocation of its own.
	acked sync.WaitGroup
	err   error
	// lead: no flusher was running when it was queued, so its Wait
	// flushes the batch it is in, on its caller's goroutine.
	lead bool
}

// Durable is a commit that Commit queued for durability; the zero Durable
// is a commit already visible (in memory).
type Durable struct {
	s *Store
	p *pendingCommit
}

// Queued reports whether the commit waits for durability.
func (d Durable) Queued() bool { return d.p != nil }

// Wait returns once the commit is durable, visible and published, or
// says why it could not be made durable. Call it once, without the
// store's lock, and always: a commit that found no flusher running
// persists its batch here, on the caller's goroutine, sparing a commit
// without company the hand-over to a flusher goroutine and back (a
// goroutine start and two wake-ups, on 2 cores a good share of a
// sequential write's CPU).
func (d Durable) Wait() error {
	if d.p == nil {
		return nil
	}
	if d.p.lead {
		d.s.lead()
	}
	d.p.acked.Wait()
	return d.p.err
}

// enqueue queues a commit installed at t; callers hold the lock, so the
// queue is in commit-time order.
func (s *Store) enqueue(t time.Time, changes []Change, held []Held) Durable {
	p := &pendingCommit{t: t, changes: changes, held: held}
	p.acked.Add(1)
	if s.visible.IsZero() {
		// Reads before the first durable commit must not see it.
		s.visible = t.Add(-time.Microsecond)
	}
	g := &s.gc
	g.mu.Lock()
	g.queue = append(g.queue, p)
	if !g.running {
		g.running = true
		p.lead = true
	}
	g.mu.Unlock()
	return Durable{s, p}
}

// lead is the flusher's work of the commit that found none running: the
// batch it is in; then, when more commits queued meanwhile, a flusher
// goroutine for them (the leader's own caller waits for its answer).
func (s *Store) lead() {
	if !s.flushBatch() {
		return
	}
	g := &s.gc
	g.mu.Lock()
	if len(g.queue) == 0 {
		g.running = false
		g.mu.Unlock()
		return
	}
	g.mu.Unlock()
	go s.flush()
}

// flush persists queued commits, batch after batch, until none are left.
func (s *Store) flush() {
	for s.flushBatch() {
	}
}

// flushBatch persists the queued commits as one batch and acknowledges
// them (or fails them and every commit queued behind them); with none
// queued it marks the flusher stopped and reports false.
func (s *Store) flushBatch() bool {
	g := &s.gc
	// Let the commits already running reach the queue first: the batch
	// gets bigger for free (no timer, no added latency when idle).
	if g.arriving.Load() > 0 {
		runtime.Gosched()
	}
	g.mu.Lock()
	batch := g.queue
	if len(batch) == 0 {
		g.running = false
		g.mu.Unlock()
		return false
	}
	g.queue, g.spare = g.spare, nil
	g.mu.Unlock()

	merged, err := s.persist(batch)

	s.lockBesideLongReads()
	if err != nil {
		g.endBatch(merged)
		// Later commits were checked against these; they fail too.
		g.mu.Lock()
		failed := append(batch, g.queue...)
		g.queue = nil
		g.mu.Unlock()
		s.rollback(failed)
		s.Unlock()
		err = fsvalue.Errorf(fsvalue.ErrUnavailable, "The commit could not be made durable: %v", err)
		for _, p := range failed {
			p.err = err
			p.acked.Done()
		}
		return true
	}
	for _, p := range batch {
		s.publish(p.t)
		s.announce(p.t, p.changes, false)
	}
	s.compact(merged)
	g.endBatch(merged)
	s.Unlock()
	for _, p := range batch {
		p.acked.Done()
	}
	g.recycle(batch)
	return true
}

// persist hands a batch to the Persister as one call: each path's last
// state, at the last commit's time, encoded (Change.Data) here, outside
// the database lock. Commits without changes (no-op writes) still wait
// their turn, so that their commit time is never published before an
// earlier commit's. It returns the merged changes.
func (s *Store) persist(batch []*pendingCommit) ([]Change, error) {
	var merged []Change
	if len(batch) == 1 {
		merged = batch[0].changes // gets Data below; nothing else reads it
	} else {
		at := map[string]int{}
		for _, p := range batch {
			for _, c := range p.changes {
				if i, ok := at[c.Path]; ok {
					merged[i] = c
					continue
				}
				at[c.Path] = len(merged)
				merged = append(merged, c)
			}
		}
	}
	var held []Held
	for _, p := range batch {
		held = append(held, p.held...)
	}
	if len(merged) == 0 && len(held) == 0 {
		return nil, nil
	}
	for i, c := range merged {
		if c.Doc == nil {
			continue
		}
		data, err := s.gc.encode(c.Doc)
		if err != nil {
			return merged, err
		}
		merged[i].Data = data
	}
	if len(held) > 0 {
		hp, ok := s.opts.Persister.(HeldPersister)
		if !ok {
			return merged, fmt.Errorf("fsstore: the persister cannot keep the %d events held with the commit", len(held))
		}
		return merged, hp.CommitHeld(s.opts.Name, batch[len(batch)-1].t, merged, held)
	}
	return merged, s.opts.Persister.Commit(s.opts.Name, batch[len(batch)-1].t, merged)
}

// compact gives the versions a durable batch wrote their encodings and
// puts their decoded forms in the database's bounded cache of decoded
// documents, past which they are dropped and decoded again when read, so
// that a large database costs about its encoded size in memory; callers
// hold the lock exclusively. A version superseded within the batch (not in
// merged) keeps its decoded form, as history.
func (s *Store) compact(merged []Change) {
	for _, c := range merged {
		if c.Doc == nil {
			continue
		}
		d, ok := s.docs[c.Path]
		if !ok {
			continue
		}
		vs := d.versions()
		// Its version is the last one, or near it when later commits are
		// already queued behind this batch.
		for i := len(vs) - 1; i >= 0; i-- {
			if x := vs[i].enc; x != nil && x.raw == nil && x.doc.Load() == c.Doc {
				x.raw = s.gc.keep(c.Data)
				s.cache.add(x, c.Doc)
				break
			}
		}
	}
}

// rollback removes the versions of commits that could not be made
// durable; callers hold the lock. Every version after s.visible belongs to
// one of them.
func (s *Store) rollback(failed []*pendingCommit) {
	for _, p := range failed {
		for _, c := range p.changes {
			d, ok := s.docs[c.Path]
			if !ok {
				continue
			}
			vs := d.versions()
			for len(vs) > 0 && vs[len(vs)-1].after(s.visible) {
				vs = vs[:len(vs)-1]
			}
			d.setVersions(slices.Clip(vs))
			if len(vs) == 0 {
				s.forget(c.Path)
			}
		}
	}
	s.unrecord(s.visible)
	s.last = s.visible
}

// forget drops a path's entry from every index; callers hold the lock.
func (s *Store) forget(rel string) {
	delete(s.docs, rel)
	coll := fsvalue.CollectionOf(rel)
	delete(s.colls[coll], rel)
}
