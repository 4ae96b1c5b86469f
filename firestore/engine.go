// Package firestore is Pyric's Firestore engine: writes and transforms,
// batches and optimistic transactions, query planning (a query walks one
// of the storage layer's field indexes, declared in firestore.indexes.json
// or built on demand, from its bound and stops at its limit, or scans
// without holding the lock) and aggregations, listeners (watch), declared
// indexes and their enforcement, and the rules gate. It stands on two
// packages: fsstore, the storage layer (versioned documents, the history
// window bounded by age and bytes, group commit to a Persister, encoded
// documents with a bounded decoded cache, RestoreStored, field indexes
// maintained on commit, and the publish hook through which each visible
// commit reaches the listeners here), and fsvalue, the data model both use
// (values and their order, field paths, document names, error kinds). The
// names callers need from them are re-exported here. Its request and
// response types are the official protos (firestorepb), so the gRPC
// adapter is a pass-through; every method takes the caller's identity
// explicitly.
package firestore

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/proto"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/firestore/fsstore"
	"github.com/pyric/pyric/firestore/fsvalue"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
)

// Options configure an Engine. The zero value is usable.
type Options struct {
	// Rules gates client requests; nil means NoRules (deny all but admin).
	Rules Rules
	// Events receives operation, commit and listener events; nil discards.
	Events event.Emitter
	// Now is the clock; nil means time.Now. Commit times are strictly
	// increasing per database even if Now stands still.
	Now func() time.Time
	// NewID mints 20-character auto ids and opaque ids; nil means random.
	NewID func() string
	// Persister makes commits durable before they are acknowledged; nil
	// keeps state in memory only. Commits are group-committed: while one
	// Persister.Commit runs, the commits that arrive queue up and the next
	// call carries all of them, merged, so concurrent writers share one
	// store transaction (and one sync).
	Persister Persister
	// Outbox, when set, holds the commit events of each durable commit a
	// consumer wants (the Cloud Functions triggers) in the same durable
	// write as the commit (the Persister must be a HeldPersister), so
	// that a crash right after the commit cannot lose them.
	Outbox service.Outbox
	// History is how long old document versions are kept for reads at a
	// past read time and listener resumes; 0 means one hour, production's
	// window without point-in-time recovery.
	History time.Duration
	// HistoryBytes bounds the memory those old versions take; 0 means
	// DefaultHistoryBytes. Past it the oldest go first, and reads older
	// than what is kept fail with FAILED_PRECONDITION naming the oldest
	// read time still served.
	HistoryBytes int
	// TransactionTimeout bounds a transaction's life; 0 means 270 s.
	TransactionTimeout time.Duration
	// TransactionIdle bounds the time between a transaction's operations; 0
	// means 60 s.
	TransactionIdle time.Duration
}

// Persister durably records committed document states; see
// fsstore.Persister, the storage layer's contract.
type Persister = fsstore.Persister

// Change is a document's new state in one commit; Doc is nil for a delete.
type Change = fsstore.Change

// Engine is the Firestore engine for any number of projects and databases,
// created on first use as on the emulator. It is safe for concurrent use.
type Engine struct {
	opts   Options
	rules  atomic.Pointer[rulesBox]
	events event.Emitter
	now    func() time.Time
	newID  func() string

	mu  sync.Mutex
	dbs map[DatabaseName]*database

	seq     atomic.Uint64
	indexes atomic.Pointer[IndexConfig]
	// declared are the declared indexes (DeclareIndexes) every database
	// maintains; guarded by mu.
	declared []fsstore.Declared

	liveOnce sync.Once
	live     *LiveRules // LiveRules
}

type rulesBox struct{ r Rules }

// New returns an empty engine.
func New(opts Options) *Engine {
	e := &Engine{opts: opts, dbs: map[DatabaseName]*database{}}
	if e.opts.History <= 0 {
		e.opts.History = time.Hour
	}
	if e.opts.HistoryBytes <= 0 {
		e.opts.HistoryBytes = DefaultHistoryBytes
	}
	if e.opts.TransactionTimeout <= 0 {
		e.opts.TransactionTimeout = 270 * time.Second
	}
	if e.opts.TransactionIdle <= 0 {
		e.opts.TransactionIdle = 60 * time.Second
	}
	e.events = opts.Events
	if e.events == nil {
		e.events = event.Discard
	}
	e.now = opts.Now
	if e.now == nil {
		e.now = time.Now
	}
	e.newID = opts.NewID
	if e.newID == nil {
		e.newID = RandomID
	}
	r := opts.Rules
	if r == nil {
		r = NoRules{}
	}
	e.rules.Store(&rulesBox{r})
	return e
}

// SetRules replaces the rules gate (nil means NoRules) and re-checks every
// listener under the new rules.
func (e *Engine) SetRules(r Rules) {
	if r == nil {
		r = NoRules{}
	}
	e.rules.Store(&rulesBox{r})
	for _, db := range e.databases() {
		db.hub.recheck()
	}
}

// Rules returns the current rules gate.
func (e *Engine) Rules() Rules { return e.rules.Load().r }

// RandomID returns a 20-character id from [A-Za-z0-9], like the SDKs' auto ids.
func RandomID() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	var b [20]byte
	var r [20]byte
	_, _ = rand.Read(r[:])
	for i := range b {
		// 248 = 4*62: reject-free mapping is slightly biased; fine for ids.
		b[i] = alphabet[int(r[i])%len(alphabet)]
	}
	return string(b[:])
}

// database is one projects/P/databases/D: its documents and their
// indexes (the storage layer, whose lock is the database lock), open
// transactions and listeners.
type database struct {
	e    *Engine
	name DatabaseName
	st   *fsstore.Store

	// txnMu guards txns, the open transactions, and txnSwept, when
	// expired ones were last dropped; it is taken after st's lock when
	// both are held, never before.
	txnMu    sync.Mutex
	txns     map[string]*txn
	txnSwept time.Time

	// lastEmit is closed once the commit events of the latest queued
	// commit are emitted (guarded by st's lock): each commit emits after
	// its predecessor, so events follow commit order even when the
	// callers of one group commit wake in another order.
	lastEmit chan struct{}
	// commitMu serializes commits (taken before st), so a commit can be
	// worked out under st's read lock while reads go on (startCommit).
	commitMu sync.Mutex

	hub *hub
}

func (e *Engine) databases() []*database {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]*database, 0, len(e.dbs))
	for _, db := range e.dbs {
		out = append(out, db)
	}
	return out
}

// databaseWithID is the one database whose id is id; ok is false when
// none or several (of different projects) have it.
func (e *Engine) databaseWithID(id string) (name DatabaseName, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for n := range e.dbs {
		if n.Database == id {
			if ok {
				return DatabaseName{}, false
			}
			name, ok = n, true
		}
	}
	return name, ok
}

// db returns (creating) the database.
func (e *Engine) db(name DatabaseName) *database {
	e.mu.Lock()
	defer e.mu.Unlock()
	db, ok := e.dbs[name]
	if !ok {
		db = &database{e: e, name: name, txns: map[string]*txn{}}
		db.st = fsstore.New(fsstore.Options{Name: name, Persister: e.opts.Persister,
			History: e.opts.History, HistoryBytes: e.opts.HistoryBytes, Now: e.now,
			Publish: db.published})
		db.hub = newHub(db)
		if len(e.declared) > 0 {
			db.st.Lock()
			db.st.Declare(e.declared)
			db.st.Unlock()
		}
		e.dbs[name] = db
	}
	return db
}

// Databases lists the databases that exist, sorted.
func (e *Engine) Databases() []DatabaseName {
	var out []DatabaseName
	for _, db := range e.databases() {
		out = append(out, db.name)
	}
	slices.SortFunc(out, func(a, b DatabaseName) int { return fsvalue.CompareNames(a.String(), b.String()) })
	return out
}

// published is the storage layer's publish hook: a commit just became
// visible (all: everything may have changed), so listeners are told.
// Called with db.st locked exclusively.
func (db *database) published(t time.Time, changes []Change, all bool) {
	db.hub.notify(t, changes, all)
}

// Reset deletes every document of every database (no events per document,
// no persistence call: the owner clears its store itself). Listeners see
// the documents disappear.
func (e *Engine) Reset() {
	for _, db := range e.databases() {
		db.st.Lock()
		db.txnMu.Lock()
		db.txns = map[string]*txn{}
		db.txnMu.Unlock()
		db.st.Reset()
		db.st.Unlock()
	}
}

// Restore loads documents into a database without rules, events or
// persistence: it is how a persisted store or a snapshot is brought back.
// Documents keep their create and update times when set; otherwise they get
// the restore time. Listeners are refreshed.
func (e *Engine) Restore(name DatabaseName, docs []*pb.Document) error {
	db := e.db(name)
	db.st.Lock()
	t := db.st.NextTime()
	var changes []Change
	for _, d := range docs {
		dn, rel, err := ParseDocumentName(d.GetName())
		if err != nil {
			db.st.Unlock()
			return err
		}
		if dn != name {
			db.st.Unlock()
			return fsvalue.Errorf(ErrInvalidArgument, "Document %q is not in database %s.", d.GetName(), name)
		}
		d = proto.Clone(d).(*pb.Document)
		if err := validateFields(d.Fields); err != nil {
			db.st.Unlock()
			return fmt.Errorf("restore %s: %w", rel, err)
		}
		if d.CreateTime == nil {
			d.CreateTime = ts(t)
		}
		if d.UpdateTime == nil {
			d.UpdateTime = ts(t)
		}
		if ut := d.UpdateTime.AsTime(); ut.After(t) {
			t = ut
		}
		changes = append(changes, Change{Path: rel, Doc: d})
	}
	db.st.Restore(t, changes)
	db.st.Unlock()
	return nil
}

// Dump returns every current document of a database, in name order.
func (e *Engine) Dump(name DatabaseName) []*pb.Document {
	db := e.db(name)
	db.st.RLock()
	defer db.st.RUnlock()
	all := db.st.All()
	out := make([]*pb.Document, 0, len(all))
	at := db.st.ReadTime()
	for _, d := range all {
		if doc := d.At(at); doc != nil {
			out = append(out, doc)
		}
	}
	slices.SortFunc(out, func(a, b *pb.Document) int { return fsvalue.CompareNames(a.Name, b.Name) })
	return out
}

// documentPaths lists the paths of name's documents in byte order,
// without reading them; some may be deleted by the time they are read.
// Their one reader, a capture's EachRecord, needs no order but a stable
// one (records fold into a map); Firestore's order (Dump's,
// fsvalue.CompareNames, which compares segment by segment) made sorting
// 100k paths 40% of writing their records.
func (e *Engine) documentPaths(name DatabaseName) []string {
	db := e.db(name)
	db.st.RLock()
	all := db.st.All()
	paths := make([]string, 0, len(all)) // Collect's growing was half the rewrite's garbage
	for p := range all {
		paths = append(paths, p)
	}
	db.st.RUnlock()
	slices.Sort(paths)
	return paths
}

// emit sends an event, filling the service.
// groupID mints an id shared by the events of one batch or transaction.
func (e *Engine) groupID(prefix string) string {
	// Written into a buffer of its own: prefix + "-" + FormatUint made
	// the number's string and then the id, two allocations.
	var buf [32]byte
	b := append(append(buf[:0], prefix...), '-')
	return string(strconv.AppendUint(b, e.seq.Add(1), 10))
}

// adminDecision is the decision on every request of admin, which
// bypasses the rules.
var adminDecision = AuthzDecision{Verdict: Allow, Reason: "admin bypasses rules"}

// authorize asks the rules unless the caller is admin.
func (e *Engine) authorize(ctx context.Context, req *AuthzRequest) AuthzDecision {
	if req.Auth.IsAdmin() {
		return adminDecision
	}
	if !e.eventsOn() {
		return e.Rules().Authorize(ctx, req)
	}
	// Record what the rules see, so the request event carries it and a
	// re-run decides against exactly that (lookups included).
	seen := &seenRequest{time: req.Time, after: req.After}
	r := *req
	if r.Get != nil {
		r.Get = seen.record("get", r.Get)
	}
	if r.GetAfter != nil {
		r.GetAfter = seen.record("getAfter", r.GetAfter)
	}
	d := e.Rules().Authorize(ctx, &r)
	d.seen = seen
	return d
}

// seenRequest is what the rules saw of one request beyond its resource and
// data: request.time, request.resource, and each document read.
type seenRequest struct {
	time  time.Time
	after *pb.Document
	reads []seenRead
}

type seenRead struct {
	fn, path string
	doc      *pb.Document
}

// maxSeenReads bounds the lookups recorded per request (production allows
// 20 distinct documents per batch; a decided-again denial reads them twice).
const maxSeenReads = 40

// record wraps l, recording each distinct document read through it.
func (s *seenRequest) record(fn string, l Lookup) Lookup {
	return func(path string) (*pb.Document, error) {
		doc, err := l(path)
		if err != nil {
			return doc, err
		}
		for _, r := range s.reads {
			if r.fn == fn && r.path == path {
				return doc, err
			}
		}
		if len(s.reads) < maxSeenReads {
			s.reads = append(s.reads, seenRead{fn: fn, path: path, doc: doc})
		}
		return doc, err
	}
}

// event renders it into the event's Seen, sharing the forms memo holds
// (nil: none).
func (s *seenRequest) event(into *event.Seen, db DatabaseName, memo *encodeMemo) {
	if s == nil || into == nil {
		return
	}
	into.Time = s.time
	if s.after != nil {
		into.After = &event.Resource{Exists: true, Data: memo.fields(s.after, db)}
	}
	for _, r := range s.reads {
		l := event.Lookup{Function: r.fn, Path: r.path, Exists: r.doc != nil}
		if r.doc != nil {
			l.Data = memo.fields(r.doc, db)
		}
		into.Lookups = append(into.Lookups, l)
	}
}

// lookup returns a Lookup over the latest state (the writer's view, for
// the rules of a commit); the caller holds db.st.
func (db *database) lookup() Lookup {
	return func(path string) (*pb.Document, error) {
		if err := ValidateDocumentPath(path); err != nil {
			return nil, err
		}
		return db.st.Get(path), nil
	}
}

// lookupAt returns a Lookup over the state at t (for the rules of a read);
// the caller holds db.st.
func (db *database) lookupAt(t time.Time) Lookup {
	return func(path string) (*pb.Document, error) {
		if err := ValidateDocumentPath(path); err != nil {
			return nil, err
		}
		return db.st.GetAt(path, t), nil
	}
}

func checkCtx(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		if err == context.DeadlineExceeded {
			return fsvalue.Errorf(ErrDeadlineExceeded, "Deadline exceeded.")
		}
		return err
	}
	return nil
}

var _ = identity.Anonymous

// existing is the named database when it exists, nil otherwise: for
// readers that must not create it (db does).
func (e *Engine) existing(name DatabaseName) *database {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.dbs[name]
}

// Document returns the document at rel as visible now, nil when it is
// absent or the database does not exist (which it does not create): a
// read for the sandbox's own consumers (session capture), without rules
// or events.
func (e *Engine) Document(name DatabaseName, rel string) *pb.Document {
	db := e.existing(name)
	if db == nil {
		return nil
	}
	db.st.RLock()
	defer db.st.RUnlock()
	return db.st.GetAt(rel, db.st.ReadTime())
}
