package firestore

import (
	"context"
	"fmt"
	"sync"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

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
	reads    map[string]*pb.Document // path -> the version read (nil: missing)
	queries  []txnQuery
	group    string
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
	if _, ok := t.reads[path]; !ok {
		if t.reads == nil {
			t.reads = map[string]*pb.Document{}
		}
		t.reads[path] = doc
	}
	t.mu.Unlock()
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
	for path, seen := range t.reads {
		if !sameVersion(seen, db.st.Get(path)) {
			return fsvalue.Errorf(ErrAborted, "Transaction aborted: the document %s it read was changed by another write; retry the transaction.", db.name.DocName(path))
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
	results, t, err := e.commit(ctx, commitReq{db: e.db(name), who: who, writes: req.GetWrites(), txid: req.GetTransaction()})
	if err != nil {
		return nil, err
	}
	return &pb.CommitResponse{WriteResults: results, CommitTime: ts(t)}, nil
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
}

type opState struct {
	op      *writeOp
	before  *pb.Document
	after   *pb.Document
	results []*pb.Value
	method  Method
	dec     AuthzDecision
	memo    *encodeMemo // the JSON forms its events share (events.go)
}

// commit is the one write path: validate, lock, check the transaction,
// apply every write to an overlay at the commit time, ask the rules, make
// the result durable, install it, then notify events and listeners.
func (e *Engine) commit(ctx context.Context, c commitReq) ([]*pb.WriteResult, time.Time, error) {
	return e.startCommit(ctx, c)()
}

// startCommit is commit up to queueing the checked commit for durability
// (the database lock released); finish waits until it is durable (or
// failed) and returns its results, having notified events. Commits
// started one after another become durable in that order, and those
// started before their predecessors finish share a store transaction.
func (e *Engine) startCommit(ctx context.Context, c commitReq) (finish func() ([]*pb.WriteResult, time.Time, error)) {
	start := time.Now()
	db := c.db
	// Until it is queued (or failed), a flusher lets it join its batch.
	defer db.st.Arrive()()
	if err := checkCtx(ctx); err != nil {
		return commitFailed(err)
	}
	ops := make([]*opState, len(c.writes))
	for i, w := range c.writes {
		op, err := parseWrite(db.name, w)
		if err != nil {
			return commitFailed(fmt.Errorf("%w", err))
		}
		ops[i] = &opState{op: op}
	}
	group := (*Group)(nil)
	origin := event.OriginClient
	if len(c.txid) > 0 {
		origin = event.OriginTransaction
	} else if !c.single {
		origin = event.OriginBatch
		if len(ops) > 1 {
			group = &Group{ID: e.groupID("batch"), Kind: "batch"}
		}
	}
	if c.who.IsAdmin() {
		origin = event.OriginAdmin
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
	var p *prepared
	if len(c.txid) == 0 {
		db.st.RLockLong()
		p = e.prepare(ctx, c, db, ops, group, db.st.NextTime(), true)
		db.st.RUnlockLong()
	}
	db.st.Lock()
	locked := true
	unlock := func() {
		if locked {
			locked = false
			db.st.Unlock()
		}
	}
	defer unlock()
	if p != nil && !p.unchanged(db) {
		p = nil
	}
	if p == nil {
		if len(c.txid) > 0 {
			t, err := db.endTxn(c.txid)
			if err != nil {
				return commitFailed(err)
			}
			if t.readOnly && len(ops) > 0 {
				return commitFailed(fsvalue.Errorf(ErrInvalidArgument, "Cannot modify entities in a read-only transaction."))
			}
			if err := db.validate(t); err != nil {
				return commitFailed(err)
			}
			group = &Group{ID: t.group, Kind: "transaction"}
		}
		p = e.prepare(ctx, c, db, ops, group, db.st.NextTime(), false)
	}
	if p.failed != nil {
		return commitFailed(p.failed)
	}
	now, overlay, order, denial := p.now, p.overlay, p.order, p.denial
	elapsed := time.Since(start)
	// The request events encode the documents, so they are made with the
	// store unlocked. A denied commit's are emitted at once (commitMu
	// keeps them in commit order); an allowed one's only once the commit
	// is durable and visible, together with its commit events (emitAll),
	// in commit order (the turns below): emitted before, a request would
	// announce a write that readers of the store do not see yet — session
	// capture flushing then wrote the allowed write with the document as
	// it was before, and a kill before its next flush left a session
	// whose replay made the document the capture says is absent.
	opEvents := func() []event.Event {
		if !e.eventsOn() {
			return nil
		}
		evs := eventSlice(2 * len(ops))
		for _, s := range ops {
			if s.op.kind != writeVerify {
				evs = append(evs, e.writeOpEvent(c, s, group, origin, elapsed))
			}
		}
		return evs
	}
	if denial != nil {
		unlock()
		e.emitAll(opEvents())
		return commitFailed(denial)
	}
	var changes []Change
	var unchanged map[string]bool // existing documents the commit leaves as they were (made for the first)
	for _, rel := range order {
		after := overlay[rel]
		before := db.st.Get(rel)
		if sameVersion(before, after) && (after == nil || after.UpdateTime.AsTime().Before(now)) {
			if unchanged == nil {
				unchanged = map[string]bool{}
			}
			unchanged[rel] = before != nil
			continue // a no-op write
		}
		changes = append(changes, Change{Path: rel, Doc: after})
	}
	// commitEvents appends the commit's commit events to evs, one per
	// write that changed its document: no-op writes raise none.
	commitEvents := func(evs []event.Event) []event.Event {
		if !e.eventsOn() {
			return evs
		}
		for _, s := range ops {
			if s.op.kind == writeVerify || unchanged[s.op.rel] || s.after != nil && s.before != nil && fsvalue.SameTime(s.after.UpdateTime, s.before.UpdateTime) {
				continue
			}
			if s.after == nil && s.before == nil {
				continue
			}
			evs = append(evs, e.commitEvent(c, s, group, now, s.after == overlay[s.op.rel]))
		}
		return evs
	}
	// When a consumer must see the commit events even across a crash
	// (the functions' triggers), they are made now and held in the
	// outbox by the same durable write as the commit.
	var commitEvs []event.Event
	var held []fsstore.Held
	if o := e.opts.Outbox; o != nil && e.eventsOn() && len(changes) > 0 && o.Holding() {
		commitEvs = commitEvents(nil)
		for _, h := range o.Hold(commitEvs) {
			held = append(held, fsstore.Held{Key: h.Key, Value: h.Value})
		}
	}
	done := db.st.CommitHeld(now, changes, held)
	prev, turn := db.lastEmit, make(chan struct{})
	db.lastEmit = turn
	unlock()
	evs := opEvents()
	return func() ([]*pb.WriteResult, time.Time, error) {
		defer close(turn)
		var err error
		if done.Queued() {
			err = done.Wait()
		}
		if prev != nil {
			<-prev
		}
		if err != nil {
			// Decided, but never committed: the requests happened all
			// the same.
			e.emitAll(evs)
			return nil, time.Time{}, err
		}

		results := make([]*pb.WriteResult, len(ops))
		for i, s := range ops {
			// Every write's result carries the update time of its document
			// as the whole commit leaves it, none when the commit leaves it
			// deleted (the field is "not set after a delete"), as the
			// official emulator answers for several writes to one document.
			wr := &pb.WriteResult{TransformResults: s.results}
			if s.op.kind == writeVerify {
				if s.after != nil {
					wr.UpdateTime = s.after.UpdateTime
				} else {
					wr.UpdateTime = ts(now)
				}
			} else if final := overlay[s.op.rel]; final != nil {
				wr.UpdateTime = final.UpdateTime
			}
			results[i] = wr
		}
		if commitEvs == nil {
			// Into the request events' slice, made with room for them.
			e.emitAll(commitEvents(evs))
		} else {
			e.emitAll(append(evs, commitEvs...))
		}
		return results, now, nil
	}
}

// prepared is a commit worked out against the state: the writes applied
// at its time, the rules asked.
type prepared struct {
	now     time.Time
	overlay map[string]*pb.Document
	order   []string
	denial  error // the first write the rules deny
	failed  error // an invalid or impossible write
	// read are the versions of the documents the commit read (its writes'
	// documents, and the rules' get/exists/getAfter), when recorded.
	read map[string]*pb.Document
}

// prepare applies ops to an overlay of the state at now and asks the
// rules about each; the caller holds db.st (read or write). With record,
// the versions of every document read are kept for unchanged.
func (e *Engine) prepare(ctx context.Context, c commitReq, db *database, ops []*opState, group *Group, now time.Time, record bool) *prepared {
	p := &prepared{now: now, overlay: map[string]*pb.Document{}}
	if record {
		p.read = map[string]*pb.Document{}
	}
	get := func(rel string) *pb.Document {
		d := db.st.Get(rel)
		if p.read != nil {
			if _, seen := p.read[rel]; !seen {
				p.read[rel] = d
			}
		}
		return d
	}
	stamp := ts(now)
	state := func(rel string) *pb.Document {
		if d, ok := p.overlay[rel]; ok {
			return d
		}
		return get(rel)
	}
	// What the SDKs send for update() after delete() of the same document
	// in one transaction or batch: the official emulator rejects the
	// request before it checks any precondition, rather than answering
	// NOT_FOUND. A set (or any other write) in between recreates the
	// document: delete, set, update is accepted.
	var deleted map[string]bool
	if len(ops) > 1 {
		deleted = map[string]bool{}
	}
	for _, s := range ops {
		if deleted == nil {
			break // one write
		}
		if deleted[s.op.rel] && s.op.kind != writeDelete && s.op.kind != writeVerify && s.op.w.GetCurrentDocument().GetExists() {
			p.failed = fsvalue.Errorf(ErrInvalidArgument, "Cannot delete then update an entity in the same request.")
			return p
		}
		if s.op.kind != writeVerify {
			deleted[s.op.rel] = s.op.kind == writeDelete
		}
	}
	for _, s := range ops {
		s.before = state(s.op.rel)
		after, results, err := s.op.apply(db.name, s.before, now, stamp)
		if err != nil {
			p.failed = err
			return p
		}
		s.after, s.results = after, results
		if s.op.kind == writeVerify {
			continue // a precondition only: no change, no rules decision
		}
		if _, ok := p.overlay[s.op.rel]; !ok {
			p.order = append(p.order, s.op.rel)
		}
		p.overlay[s.op.rel] = after
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
	for _, rel := range p.order {
		stored, final := get(rel), p.overlay[rel]
		if stored != nil && final != nil && fsvalue.SameTime(stored.CreateTime, final.CreateTime) && fsvalue.IdenticalFields(stored.Fields, final.Fields) {
			p.overlay[rel] = stored
		}
	}
	if c.who.IsAdmin() {
		// Admin bypasses the rules: nothing to ask them, nor to record
		// for the lookups they would make.
		for _, s := range ops {
			if s.op.kind != writeVerify {
				s.dec = adminDecision
			}
		}
		return p
	}
	// The rules see every write of the batch with the committed state as
	// get() and the batch's final state as getAfter().
	getAfter := func(path string) (*pb.Document, error) {
		if err := ValidateDocumentPath(path); err != nil {
			return nil, err
		}
		return state(path), nil
	}
	lookup := func(path string) (*pb.Document, error) {
		if err := ValidateDocumentPath(path); err != nil {
			return nil, err
		}
		return get(path), nil
	}
	for _, s := range ops {
		if s.op.kind == writeVerify {
			continue
		}
		req := &AuthzRequest{Database: db.name, Method: s.method, Path: s.op.rel, Auth: c.who,
			Resource: s.before, Time: now, Get: lookup, GetAfter: getAfter, Group: group}
		if s.method != MethodDelete {
			req.After = s.after
		}
		s.dec = e.authorize(ctx, req)
		if s.dec.Verdict != Allow && p.denial == nil {
			p.denial = denied(s.method, s.op.rel, s.dec)
		}
	}
	return p
}

// unchanged reports whether a commit prepared under the read lock still
// stands: its time is after the last commit and every document it read is
// at the version it read. The caller holds db.st exclusively.
func (p *prepared) unchanged(db *database) bool {
	if p.read == nil || !p.now.After(db.st.Last()) {
		return false
	}
	for rel, d := range p.read {
		if !sameVersion(db.st.Get(rel), d) {
			return false
		}
	}
	return true
}

func commitFailed(err error) func() ([]*pb.WriteResult, time.Time, error) {
	return func() ([]*pb.WriteResult, time.Time, error) { return nil, time.Time{}, err }
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
	finish := make([]func() ([]*pb.WriteResult, time.Time, error), len(req.GetWrites()))
	for i, w := range req.GetWrites() {
		finish[i] = e.startCommit(ctx, commitReq{db: db, who: who, writes: []*pb.Write{w}, single: true})
	}
	for _, f := range finish {
		res, _, err := f()
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
