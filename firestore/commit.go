package firestore

import (
	"context"
	"fmt"
	"sync"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/firestore/fsstore"
	"github.com/pyric/pyric/firestore/fsvalue"
	"github.com/pyric/pyric/identity"
)

// txn is an open transaction. Read-write transactions are optimistic: they
// record the version of every document (and the result of every query) they
// read, and Commit aborts if any of them changed in the meantime, so the
// client retries, as it does on production's lock contention.
type txn struct {
	id       string
	readOnly bool
	readTime time.Time // read-only: the snapshot time
	begun    time.Time
	mu       sync.Mutex
	used     time.Time
	// reads are the versions its reads saw (nil: missing), the first
	// one of each path: the first maxTxnReads in read order inline, the
	// rest in moreReads. A read-modify-write reads one or a few
	// documents, and a map of them was two allocations per transaction.
	reads     [maxTxnReads]readSeen
	nreads    int
	moreReads map[string]*pb.Document
	queries   []txnQuery
	group     string
	// forms are the JSON forms of the fields of versions its reads'
	// events encoded (the first maxTxnForms), by identity: the commit's
	// events, whose document before is most often one of them (a
	// read-modify-write), share them instead of encoding it again. Kept
	// inline: a map of them cost the allocation the sharing saves.
	forms  [maxTxnForms]docFields
	nforms int
}

// readSeen is the version of the document at path a transaction read.
type readSeen struct {
	path string
	doc  *pb.Document
}

// maxTxnReads is how many of a transaction's reads it keeps inline.
const maxTxnReads = 4

// maxTxnForms bounds the JSON forms a transaction keeps for its commit:
// a read-modify-write reads a few documents; a transaction reading more
// keeps the first ones'.
const maxTxnForms = 4

// keepForm remembers the JSON form of d's fields its read's event
// encoded; read-only transactions commit nothing and keep none.
func (t *txn) keepForm(d *pb.Document, form map[string]any) {
	if t.readOnly || d == nil || form == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.nforms < len(t.forms) {
		t.forms[t.nforms] = docFields{d, form}
		t.nforms++
	}
}

// form is the JSON form its reads' events gave d's fields, nil if none.
func (t *txn) form(d *pb.Document) map[string]any {
	if d == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, f := range t.forms[:t.nforms] {
		if f.d == d {
			return f.enc
		}
	}
	return nil
}

type txnQuery struct {
	q    *query
	seen []*pb.Document
}

// errTxnInvalid is production's error for an unknown, finished or expired transaction.
func errTxnInvalid() error {
	return fsvalue.Errorf(ErrInvalidArgument, "The referenced transaction has expired or is no longer valid.")
}

// BeginTransaction starts a transaction.
func (e *Engine) BeginTransaction(ctx context.Context, who identity.Identity, req *pb.BeginTransactionRequest) (*pb.BeginTransactionResponse, error) {
	name, err := ParseDatabaseName(req.GetDatabase())
	if err != nil {
		return nil, err
	}
	db := e.db(name)
	opts := req.GetOptions()
	if opts.GetReadOnly() != nil {
		// Its read time is the store's.
		db.st.RLock()
		defer db.st.RUnlock()
	}
	t, err := db.begin(opts)
	if err != nil {
		return nil, err
	}
	return &pb.BeginTransactionResponse{Transaction: []byte(t.id)}, nil
}

// begin opens a transaction; for a read-only one callers hold db.st's
// lock (read is enough). It takes db.txnMu: opening a read-write
// transaction waits for no read and no commit.
func (db *database) begin(opts *pb.TransactionOptions) (*txn, error) {
	now := db.e.now()
	t := &txn{id: "txn-" + db.e.newID(), begun: now, used: now}
	t.group = db.e.groupID("txn")
	if ro := opts.GetReadOnly(); ro != nil {
		t.readOnly = true
		t.readTime = db.st.ReadTime()
		if rt := ro.GetReadTime(); rt != nil {
			at, err := db.checkReadTime(rt.AsTime(), rt.GetNanos())
			if err != nil {
				return nil, err
			}
			t.readTime = at
		}
	}
	db.txnMu.Lock()
	db.expireTxns(now)
	db.txns[t.id] = t
	db.txnMu.Unlock()
	return t, nil
}

// txnSweepEvery is how often begin looks for expired transactions to drop
// (each lookup still refuses an expired one): a sweep visits every open
// transaction, so one per begin made opening cost as many as were open.
const txnSweepEvery = time.Second

// expireTxns drops transactions past their limits, at most once per
// txnSweepEvery; callers hold db.txnMu.
func (db *database) expireTxns(now time.Time) {
	if d := now.Sub(db.txnSwept); d >= 0 && d < txnSweepEvery {
		return
	}
	db.txnSwept = now
	for id, t := range db.txns {
		if db.expired(t, now) {
			delete(db.txns, id)
		}
	}
}

func (db *database) expired(t *txn, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return now.Sub(t.begun) > db.e.opts.TransactionTimeout || now.Sub(t.used) > db.e.opts.TransactionIdle
}

// txn finds a live transaction and marks it used.
func (db *database) txn(id []byte) (*txn, error) { return db.findTxn(id, false) }

// endTxn finds a live transaction and ends it (Commit, Rollback): no
// call finds it afterwards.
func (db *database) endTxn(id []byte) (*txn, error) { return db.findTxn(id, true) }

func (db *database) findTxn(id []byte, end bool) (*txn, error) {
	now := db.e.now()
	db.txnMu.Lock()
	defer db.txnMu.Unlock()
	t, ok := db.txns[string(id)]
	if !ok {
		return nil, errTxnInvalid()
	}
	expired := db.expired(t, now)
	if expired || end {
		delete(db.txns, t.id)
	}
	if expired {
		return nil, errTxnInvalid()
	}
	t.mu.Lock()
	t.used = now
	t.mu.Unlock()
	return t, nil
}

func (t *txn) recordRead(path string, doc *pb.Document) {
	if t.readOnly {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.hasRead(path) {
		return // the first read of a path is the one validated
	}
	if t.nreads < len(t.reads) {
		t.reads[t.nreads] = readSeen{path, doc}
		t.nreads++
		return
	}
	if t.moreReads == nil {
		t.moreReads = map[string]*pb.Document{}
	}
	t.moreReads[path] = doc
}

// hasRead reports whether t read path already; callers hold t.mu.
func (t *txn) hasRead(path string) bool {
	for _, r := range t.reads[:t.nreads] {
		if r.path == path {
			return true
		}
	}
	_, ok := t.moreReads[path]
	return ok
}

func (t *txn) recordQuery(q *query, docs []*pb.Document) {
	if t.readOnly {
		return
	}
	t.mu.Lock()
	t.queries = append(t.queries, txnQuery{q: q, seen: docs})
	t.mu.Unlock()
}

// validate checks that nothing the transaction read has changed; callers
// hold db.st's lock.
func (db *database) validate(t *txn) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	changed := func(path string, seen *pb.Document) error {
		if sameVersion(seen, db.st.Get(path)) {
			return nil
		}
		return fsvalue.Errorf(ErrAborted, "Transaction aborted: the document %s it read was changed by another write; retry the transaction.", db.name.DocName(path))
	}
	for _, r := range t.reads[:t.nreads] {
		if err := changed(r.path, r.doc); err != nil {
			return err
		}
	}
	for path, seen := range t.moreReads {
		if err := changed(path, seen); err != nil {
			return err
		}
	}
	for _, tq := range t.queries {
		now := db.runQuery(tq.q, db.st.Last(), true)
		if len(now) != len(tq.seen) {
			return fsvalue.Errorf(ErrAborted, "Transaction aborted: the result of a query it ran (on %s) was changed by another write; retry the transaction.", tq.q.describe())
		}
		for i := range now {
			if !sameVersion(now[i], tq.seen[i]) {
				return fsvalue.Errorf(ErrAborted, "Transaction aborted: the result of a query it ran (on %s) was changed by another write; retry the transaction.", tq.q.describe())
			}
		}
	}
	return nil
}

func sameVersion(a, b *pb.Document) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Name == b.Name && fsvalue.SameTime(a.UpdateTime, b.UpdateTime)
}

// Rollback ends a transaction without writing.
func (e *Engine) Rollback(ctx context.Context, who identity.Identity, req *pb.RollbackRequest) error {
	name, err := ParseDatabaseName(req.GetDatabase())
	if err != nil {
		return err
	}
	_, err = e.db(name).endTxn(req.GetTransaction())
	return err
}

// Commit applies writes atomically, within a transaction when one is named.
func (e *Engine) Commit(ctx context.Context, who identity.Identity, req *pb.CommitRequest) (*pb.CommitResponse, error) {
	name, err := ParseDatabaseName(req.GetDatabase())
	if err != nil {
		return nil, err
	}
	if err := checkRequestSize(ctx, req); err != nil {
		return nil, err
	}
	r := e.startCommit(ctx, commitReq{db: e.db(name), who: who, writes: req.GetWrites(), txid: req.GetTransaction(), owned: requestOwned(ctx)})
	results, _, err := r.finish()
	if err != nil {
		return nil, err
	}
	return &pb.CommitResponse{WriteResults: results, CommitTime: r.commitTime()}, nil
}

type commitReq struct {
	db     *database
	who    identity.Identity
	writes []*pb.Write
	txid   []byte
	// autoID is the minted id of a CreateDocument without a document id,
	// recorded for replays.
	autoID string
	// single marks a write that is not part of a batch (events say user).
	single bool
	// owned says the writes are the engine's to keep (requestOwned).
	owned bool
}

type opState struct {
	op      *writeOp
	before  *pb.Document
	after   *pb.Document
	results []*pb.Value
	method  Method
	dec     AuthzDecision
	memo    *encodeMemo // the JSON forms its events share (events.go)
	// memoSpace is where memo points once made: part of the commit's
	// one allocation (commitRun), where it was one of its own.
	memoSpace encodeMemo
	// beforeForm is the JSON form of before's fields that the
	// transaction's read of it encoded, nil if none (txn.forms).
	beforeForm map[string]any
}

// commit is the one write path: validate, lock, check the transaction,
// apply every write to an overlay at the commit time, ask the rules, make
// the result durable, install it, then notify events and listeners.
func (e *Engine) commit(ctx context.Context, c commitReq) ([]*pb.WriteResult, time.Time, error) {
	return e.startCommit(ctx, c).finish()
}

// commitRun is one commit from its start to its answer: everything
// startCommit works out and finish needs, in one allocation (with the
// state of a single write inline), where a commit of one small document
// made a dozen closures, maps and slices of its own.
type commitRun struct {
	e *Engine
	c commitReq
	// err is why the commit failed before it was queued (finish returns
	// it); turn is nil then.
	err error

	ops     []opState
	one     [1]opState // ops of a single write
	p       prepared
	group   *Group
	origin  event.Origin
	elapsed time.Duration
	// unchanged are the existing documents the commit leaves as they
	// were (no-op writes), nil for none.
	unchanged map[string]bool

	done fsstore.Durable
	// prev is closed once the previous commit's events are emitted; this
	// one closes turn once its own are (database.lastEmit).
	prev, turn chan struct{}
	// evs are the request events, made before finish; commitEvs the
	// commit events when they were made early, for the outbox.
	evs, commitEvs []event.Event
}

// startCommit is commit up to queueing the checked commit for durability
// (the database lock released); its finish waits until it is durable (or
// failed) and returns its results, having notified events. Commits
// started one after another become durable in that order, and those
// started before their predecessors finish share a store transaction.
func (e *Engine) startCommit(ctx context.Context, c commitReq) *commitRun {
	start := time.Now()
	db := c.db
	r := &commitRun{e: e, c: c}
	// Until it is queued (or failed), a flusher lets it join its batch.
	defer db.st.Arrive()()
	if err := checkCtx(ctx); err != nil {
		r.err = err
		return r
	}
	if len(c.writes) == 1 {
		r.ops = r.one[:]
	} else {
		r.ops = make([]opState, len(c.writes))
	}
	for i, w := range c.writes {
		op, err := parseWrite(db.name, w)
		if err != nil {
			r.err = fmt.Errorf("%w", err)
			return r
		}
		op.keepSent = c.owned && op.keepsSent()
		r.ops[i].op = op
	}
	r.origin = event.OriginClient
	if len(c.txid) > 0 {
		r.origin = event.OriginTransaction
	} else if !c.single {
		r.origin = event.OriginBatch
		if len(r.ops) > 1 {
			r.group = &Group{ID: e.groupID("batch"), Kind: "batch"}
		}
	}
	if c.who.IsAdmin() {
		r.origin = event.OriginAdmin
	}

	// Writers take commitMu, so no other commit runs between the two
	// phases below. A write outside a transaction first applies its writes
	// and asks the rules under the read lock — the costly part (a document
	// with a 100,000-element list and a rule calling hasAll on it takes
	// a good part of a second) — so reads go on meanwhile; then it takes
	// the write lock, checks that nothing it read changed (a reset or a
	// restore does not take commitMu) and commits. When something did,
	// everything is done again under the write lock.
	db.commitMu.Lock()
	defer db.commitMu.Unlock()
	prepared := false
	if len(c.txid) == 0 {
		db.st.RLockLong()
		e.prepare(ctx, r, db.st.NextTime(), true)
		db.st.RUnlockLong()
		prepared = true
	}
	db.st.Lock()
	queued := r.decide(ctx, prepared && r.p.unchanged(db))
	db.st.Unlock()
	if !queued {
		return r
	}
	r.elapsed = time.Since(start)
	// The request events encode the documents, so they are made with the
	// store unlocked. A denied commit's are emitted at once (commitMu
	// keeps them in commit order); an allowed one's only once the commit
	// is durable and visible, together with its commit events (emitAll),
	// in commit order (the turns): emitted before, a request would
	// announce a write that readers of the store do not see yet — session
	// capture flushing then wrote the allowed write with the document as
	// it was before, and a kill before its next flush left a session
	// whose replay made the document the capture says is absent.
	if r.p.denial != nil {
		e.emitAll(r.opEvents())
		r.err = r.p.denial
		return r
	}
	r.evs = r.opEvents()
	return r
}

// decide works the commit out under the database's write lock (kept):
// the transaction's checks, the writes applied and the rules asked
// unless prepared still stands, and, when the rules allow it, the commit
// installed and queued for durability. It reports whether the commit got
// as far as a verdict (queued, or denied: r.p.denial); otherwise r.err
// says why not.
func (r *commitRun) decide(ctx context.Context, prepared bool) bool {
	e, c, db := r.e, r.c, r.c.db
	if !prepared {
		if len(c.txid) > 0 {
			t, err := db.endTxn(c.txid)
			if err != nil {
				r.err = err
				return false
			}
			if t.readOnly && len(r.ops) > 0 {
				r.err = fsvalue.Errorf(ErrInvalidArgument, "Cannot modify entities in a read-only transaction.")
				return false
			}
			if err := db.validate(t); err != nil {
				r.err = err
				return false
			}
			r.group = &Group{ID: t.group, Kind: "transaction"}
			e.prepare(ctx, r, db.st.NextTime(), false)
			for i := range r.ops {
				r.ops[i].beforeForm = t.form(r.ops[i].before)
			}
		} else {
			e.prepare(ctx, r, db.st.NextTime(), false)
		}
	}
	p := &r.p
	if p.failed != nil {
		r.err = p.failed
		return false
	}
	if p.denial != nil {
		return true
	}
	var changes []Change
	if n := len(p.overlay.keys); n == 1 {
		changes = p.change[:0]
	}
	for i, rel := range p.overlay.keys {
		after := p.overlay.docs[i]
		before := db.st.Get(rel)
		if sameVersion(before, after) && (after == nil || after.UpdateTime.AsTime().Before(p.now)) {
			if r.unchanged == nil {
				r.unchanged = map[string]bool{}
			}
			r.unchanged[rel] = before != nil
			continue // a no-op write
		}
		changes = append(changes, Change{Path: rel, Doc: after})
	}
	// When a consumer must see the commit events even across a crash
	// (the functions' triggers), they are made now and held in the
	// outbox by the same durable write as the commit.
	var held []fsstore.Held
	if o := e.opts.Outbox; o != nil && e.eventsOn() && len(changes) > 0 && o.Holding() {
		r.commitEvs = r.commitEvents(nil)
		for _, h := range o.Hold(r.commitEvs) {
			held = append(held, fsstore.Held{Key: h.Key, Value: h.Value})
		}
	}
	r.done = db.st.CommitHeld(p.now, changes, held)
	r.prev, r.turn = db.lastEmit, make(chan struct{})
	db.lastEmit = r.turn
	return true
}

// opEvents are the request events of the commit's writes (none for
// verify-only writes).
func (r *commitRun) opEvents() []event.Event {
	if !r.e.eventsOn() {
		return nil
	}
	evs := eventSlice(2 * len(r.ops))
	for i := range r.ops {
		if s := &r.ops[i]; s.op.kind != writeVerify {
			evs = append(evs, r.e.writeOpEvent(r.c, s, r.group, r.origin, r.elapsed))
		}
	}
	return evs
}

// commitEvents appends the commit's commit events to evs, one per write
// that changed its document: no-op writes raise none.
func (r *commitRun) commitEvents(evs []event.Event) []event.Event {
	if !r.e.eventsOn() {
		return evs
	}
	for i := range r.ops {
		s := &r.ops[i]
		if s.op.kind == writeVerify || r.unchanged[s.op.rel] || s.after != nil && s.before != nil && fsvalue.SameTime(s.after.UpdateTime, s.before.UpdateTime) {
			continue
		}
		if s.after == nil && s.before == nil {
			continue
		}
		final, _ := r.p.overlay.get(s.op.rel)
		evs = append(evs, r.e.commitEvent(r.c, s, r.group, r.p.now, s.after == final))
	}
	return evs
}

// finish waits until the commit is durable (or failed), emits its events
// after its predecessor's, and returns its results: call it once.
func (r *commitRun) finish() ([]*pb.WriteResult, time.Time, error) {
	if r.turn == nil {
		return nil, time.Time{}, r.err
	}
	defer close(r.turn)
	var err error
	if r.done.Queued() {
		err = r.done.Wait()
	}
	if r.prev != nil {
		<-r.prev
	}
	if err != nil {
		// Decided, but never committed: the requests happened all
		// the same.
		r.e.emitAll(r.evs)
		return nil, time.Time{}, err
	}

	now := r.p.now
	results, msgs := newWriteResults(len(r.ops))
	for i := range r.ops {
		s := &r.ops[i]
		// Every write's result carries the update time of its document
		// as the whole commit leaves it, none when the commit leaves it
		// deleted (the field is "not set after a delete"), as the
		// official emulator answers for several writes to one document.
		wr := &msgs[i]
		wr.TransformResults = s.results
		if s.op.kind == writeVerify {
			if s.after != nil {
				wr.UpdateTime = s.after.UpdateTime
			} else {
				wr.UpdateTime = r.p.stamp
			}
		} else if final, _ := r.p.overlay.get(s.op.rel); final != nil {
			wr.UpdateTime = final.UpdateTime
		}
		results[i] = wr
	}
	if r.commitEvs == nil {
		// Into the request events' slice, made with room for them.
		r.e.emitAll(r.commitEvents(r.evs))
	} else {
		r.e.emitAll(append(r.evs, r.commitEvs...))
	}
	return results, now, nil
}

// oneWriteResult is the results of a commit of one write, allocated as
// one.
type oneWriteResult struct {
	list [1]*pb.WriteResult
	msg  [1]pb.WriteResult
}

// newWriteResults returns the n write results of a commit, each pointing
// to its zero message in msgs: two allocations (one for a single write)
// where each result was one of its own.
func newWriteResults(n int) ([]*pb.WriteResult, []pb.WriteResult) {
	var results []*pb.WriteResult
	var msgs []pb.WriteResult
	if n == 1 {
		one := &oneWriteResult{}
		results, msgs = one.list[:], one.msg[:]
	} else {
		results, msgs = make([]*pb.WriteResult, n), make([]pb.WriteResult, n)
	}
	for i := range msgs {
		results[i] = &msgs[i]
	}
	return results, msgs
}

// commitTime is the commit's time as a response carries it: the stamp
// its documents got (shared: neither is changed once made).
func (r *commitRun) commitTime() *timestamppb.Timestamp {
	if r.p.stamp != nil {
		return r.p.stamp
	}
	return ts(r.p.now)
}

// prepared is a commit worked out against the state: the writes applied
// at its time, the rules asked.
type prepared struct {
	now   time.Time
	stamp *timestamppb.Timestamp // now, as the documents it writes carry it
	// overlay is the state the commit leaves each document it writes in
	// (nil: deleted), in the order the writes first name them.
	overlay docVersions
	denial  error // the first write the rules deny
	failed  error // an invalid or impossible write
	// read are the versions of the documents the commit read (its writes'
	// documents, and the rules' get/exists/getAfter), when recorded.
	read   docVersions
	record bool
	db     *database
	// change is the storage of a single change (decide).
	change [1]Change
}

// get is the stored version of rel, recorded as read.
func (p *prepared) get(rel string) *pb.Document {
	d := p.db.st.Get(rel)
	if p.record {
		p.read.setFirst(rel, d)
	}
	return d
}

// state is rel as the commit's writes so far leave it.
func (p *prepared) state(rel string) *pb.Document {
	if d, ok := p.overlay.get(rel); ok {
		return d
	}
	return p.get(rel)
}

// prepare applies r's writes to an overlay of the state at now and asks
// the rules about each, into r.p; the caller holds db.st (read or write).
// With record, the versions of every document read are kept for
// unchanged.
func (e *Engine) prepare(ctx context.Context, r *commitRun, now time.Time, record bool) {
	c, db, ops := r.c, r.c.db, r.ops
	p := &r.p
	p.overlay.reset()
	p.read.reset()
	p.now, p.stamp, p.denial, p.failed, p.record, p.db = now, ts(now), nil, nil, record, db
	// What the SDKs send for update() after delete() of the same document
	// in one transaction or batch: the official emulator rejects the
	// request before it checks any precondition, rather than answering
	// NOT_FOUND. A set (or any other write) in between recreates the
	// document: delete, set, update is accepted.
	if len(ops) > 1 {
		deleted := map[string]bool{}
		for i := range ops {
			s := &ops[i]
			if deleted[s.op.rel] && s.op.kind != writeDelete && s.op.kind != writeVerify && s.op.w.GetCurrentDocument().GetExists() {
				p.failed = fsvalue.Errorf(ErrInvalidArgument, "Cannot delete then update an entity in the same request.")
				return
			}
			if s.op.kind != writeVerify {
				deleted[s.op.rel] = s.op.kind == writeDelete
			}
		}
	}
	for i := range ops {
		s := &ops[i]
		s.before = p.state(s.op.rel)
		after, results, err := s.op.apply(db.name, s.before, now, p.stamp)
		if err != nil {
			p.failed = err
			return
		}
		s.after, s.results = after, results
		if s.op.kind == writeVerify {
			continue // a precondition only: no change, no rules decision
		}
		p.overlay.set(s.op.rel, after)
		switch {
		case s.op.kind == writeDelete:
			s.method = MethodDelete
		case s.before == nil:
			s.method = MethodCreate
		default:
			s.method = MethodUpdate
		}
	}
	// A document the commit's writes leave with the fields it had, never
	// deleted in between, keeps its stored version though a write in
	// between changed it: every write result carries its earlier update
	// time and nothing is committed (observed on the official emulator:
	// an increment and a decrement of one field in one commit, in a
	// transaction too; deleted and set again, it is new).
	for i, rel := range p.overlay.keys {
		stored, final := p.get(rel), p.overlay.docs[i]
		if stored == nil || final == nil || !fsvalue.SameTime(stored.CreateTime, final.CreateTime) {
			continue
		}
		if len(ops) == 1 {
			// Its one write was applied to the stored version, and apply
			// compared the fields already: the same ones keep the stored
			// update time (comparing them again was a tenth of a small
			// set's prepare).
			if final.UpdateTime == stored.UpdateTime {
				p.overlay.docs[i] = stored
			}
			continue
		}
		if fsvalue.IdenticalFields(stored.Fields, final.Fields) {
			p.overlay.docs[i] = stored
		}
	}
	if c.who.IsAdmin() {
		// Admin bypasses the rules: nothing to ask them, nor to record
		// for the lookups they would make.
		for i := range ops {
			if s := &ops[i]; s.op.kind != writeVerify {
				s.dec = adminDecision
			}
		}
		return
	}
	e.authorizeWrites(ctx, r)
}

// authorizeWrites asks the rules about each of r's writes, prepared: they
// see every write of the batch with the committed state as get() and the
// batch's final state as getAfter().
func (e *Engine) authorizeWrites(ctx context.Context, r *commitRun) {
	p, db := &r.p, r.c.db
	getAfter := func(path string) (*pb.Document, error) {
		if err := ValidateDocumentPath(path); err != nil {
			return nil, err
		}
		return p.state(path), nil
	}
	lookup := func(path string) (*pb.Document, error) {
		if err := ValidateDocumentPath(path); err != nil {
			return nil, err
		}
		return p.get(path), nil
	}
	for i := range r.ops {
		s := &r.ops[i]
		if s.op.kind == writeVerify {
			continue
		}
		req := &AuthzRequest{Database: db.name, Method: s.method, Path: s.op.rel, Auth: r.c.who,
			Resource: s.before, Time: p.now, Get: lookup, GetAfter: getAfter, Group: r.group}
		if s.method != MethodDelete {
			req.After = s.after
		}
		s.dec = e.authorize(ctx, req)
		if s.dec.Verdict != Allow && p.denial == nil {
			p.denial = denied(s.method, s.op.rel, s.dec)
		}
	}
}

// unchanged reports whether a commit prepared under the read lock still
// stands: it did not fail, its time is after the last commit and every
// document it read is at the version it read. The caller holds db.st
// exclusively.
func (p *prepared) unchanged(db *database) bool {
	if !p.record || !p.now.After(db.st.Last()) {
		return false
	}
	for i, rel := range p.read.keys {
		if !sameVersion(db.st.Get(rel), p.read.docs[i]) {
			return false
		}
	}
	return true
}

// docVersions maps document paths to documents, keeping the order in
// which they were first set: a commit's overlay and the versions it read.
// Most commits name one document, so the first few entries live in the
// struct and a map indexes them only past those (two maps and their
// tables were a good share of a single write's allocations).
type docVersions struct {
	keys  []string
	docs  []*pb.Document
	index map[string]int // key -> position, past smallDocs keys
	k0    [smallDocs]string
	d0    [smallDocs]*pb.Document
}

const smallDocs = 4

func (m *docVersions) reset() {
	clear(m.k0[:])
	clear(m.d0[:])
	m.keys, m.docs, m.index = m.k0[:0], m.d0[:0], nil
}

func (m *docVersions) find(rel string) int {
	if m.index != nil {
		if i, ok := m.index[rel]; ok {
			return i
		}
		return -1
	}
	for i, k := range m.keys {
		if k == rel {
			return i
		}
	}
	return -1
}

// get is rel's document and whether rel is set.
func (m *docVersions) get(rel string) (*pb.Document, bool) {
	if i := m.find(rel); i >= 0 {
		return m.docs[i], true
	}
	return nil, false
}

// set sets rel's document.
func (m *docVersions) set(rel string, d *pb.Document) {
	if i := m.find(rel); i >= 0 {
		m.docs[i] = d
		return
	}
	m.add(rel, d)
}

// setFirst sets rel's document unless rel is set.
func (m *docVersions) setFirst(rel string, d *pb.Document) {
	if m.find(rel) < 0 {
		m.add(rel, d)
	}
}

func (m *docVersions) add(rel string, d *pb.Document) {
	m.keys = append(m.keys, rel)
	m.docs = append(m.docs, d)
	switch {
	case m.index != nil:
		m.index[rel] = len(m.keys) - 1
	case len(m.keys) > smallDocs:
		m.index = make(map[string]int, 2*len(m.keys))
		for i, k := range m.keys {
			m.index[k] = i
		}
	}
}

// BatchWrite applies writes independently (not atomically); each gets its
// own status. Two writes to one document are rejected, as in production.
func (e *Engine) BatchWrite(ctx context.Context, who identity.Identity, req *pb.BatchWriteRequest) (*pb.BatchWriteResponse, error) {
	name, err := ParseDatabaseName(req.GetDatabase())
	if err != nil {
		return nil, err
	}
	if err := checkRequestSize(ctx, req); err != nil {
		return nil, err
	}
	if len(req.GetWrites()) > MaxWritesPerCommit {
		return nil, fsvalue.Errorf(ErrInvalidArgument, "A batch write may contain at most %d writes; this one has %d.", MaxWritesPerCommit, len(req.GetWrites()))
	}
	seen := map[string]bool{}
	for _, w := range req.GetWrites() {
		op, err := parseWrite(name, w)
		if err != nil {
			return nil, err
		}
		if seen[op.rel] {
			return nil, fsvalue.Errorf(ErrInvalidArgument, "A batch write may not contain more than one write to the same document (%s).", op.name)
		}
		seen[op.rel] = true
	}
	resp := &pb.BatchWriteResponse{}
	db := e.db(name)
	// Each write is its own commit; all are checked and queued before the
	// first is waited for, so that they share store transactions (one per
	// write, each waited for in turn, made a bulk load cost a store
	// transaction and its garbage per few documents). Production applies a
	// batch's writes in no particular order either.
	runs := make([]*commitRun, len(req.GetWrites()))
	for i, w := range req.GetWrites() {
		runs[i] = e.startCommit(ctx, commitReq{db: db, who: who, writes: []*pb.Write{w}, single: true})
	}
	for _, r := range runs {
		res, _, err := r.finish()
		st := Status(err).Proto()
		resp.Status = append(resp.Status, st)
		if err != nil {
			resp.WriteResults = append(resp.WriteResults, &pb.WriteResult{})
			continue
		}
		resp.WriteResults = append(resp.WriteResults, res[0])
	}
	return resp, nil
}

// CreateDocument creates a document, minting an id when none is given.
func (e *Engine) CreateDocument(ctx context.Context, who identity.Identity, req *pb.CreateDocumentRequest) (*pb.Document, error) {
	db, parent, err := ParseParentName(req.GetParent())
	if err != nil {
		return nil, err
	}
	if err := ValidateCollectionID(req.GetCollectionId()); err != nil {
		return nil, err
	}
	id, auto := req.GetDocumentId(), ""
	if id == "" {
		id = e.newID()
		auto = id
	}
	rel := req.GetCollectionId() + "/" + id
	if parent != "" {
		rel = parent + "/" + rel
	}
	if err := ValidateDocumentPath(rel); err != nil {
		return nil, err
	}
	doc := &pb.Document{Name: db.DocName(rel), Fields: req.GetDocument().GetFields()}
	w := &pb.Write{Operation: &pb.Write_Update{Update: doc}, CurrentDocument: &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: false}}}
	if _, _, err := e.commit(ctx, commitReq{db: e.db(db), who: who, writes: []*pb.Write{w}, autoID: auto, single: true}); err != nil {
		return nil, err
	}
	return e.readBack(db, rel, req.GetMask())
}

// UpdateDocument updates or inserts a document.
func (e *Engine) UpdateDocument(ctx context.Context, who identity.Identity, req *pb.UpdateDocumentRequest) (*pb.Document, error) {
	db, rel, err := ParseDocumentName(req.GetDocument().GetName())
	if err != nil {
		return nil, err
	}
	w := &pb.Write{Operation: &pb.Write_Update{Update: req.GetDocument()}, UpdateMask: req.GetUpdateMask(), CurrentDocument: req.GetCurrentDocument()}
	if _, _, err := e.commit(ctx, commitReq{db: e.db(db), who: who, writes: []*pb.Write{w}, single: true}); err != nil {
		return nil, err
	}
	return e.readBack(db, rel, req.GetMask())
}

// DeleteDocument deletes a document; deleting a missing one succeeds.
func (e *Engine) DeleteDocument(ctx context.Context, who identity.Identity, req *pb.DeleteDocumentRequest) error {
	db, _, err := ParseDocumentName(req.GetName())
	if err != nil {
		return err
	}
	w := &pb.Write{Operation: &pb.Write_Delete{Delete: req.GetName()}, CurrentDocument: req.GetCurrentDocument()}
	_, _, err = e.commit(ctx, commitReq{db: e.db(db), who: who, writes: []*pb.Write{w}, single: true})
	return err
}

func (e *Engine) readBack(name DatabaseName, rel string, mask *pb.DocumentMask) (*pb.Document, error) {
	db := e.db(name)
	db.st.RLock()
	d := db.st.GetAt(rel, db.st.ReadTime())
	db.st.RUnlock()
	if d == nil {
		return nil, fsvalue.Errorf(ErrNotFound, "Document %q not found.", name.DocName(rel))
	}
	return project(d, mask)
}
