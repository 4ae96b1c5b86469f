// Package firestore is Pyric's Firestore engine: writes and transforms,
// batches and optimistic transactions over a multi-version in-memory store
// (group-committed to a Persister, readers never waiting for a sync;
// durable documents kept in their stored encoding with a bounded cache of
// decoded ones, and a store reopened without decoding, see RestoreStored),
// a history window bounded by age and bytes of memory, queries served from
// single-field and composite indexes built on demand (or a scan that does
// not hold the lock) and aggregations, listeners (watch), index
// enforcement and the rules gate. Values, their order, field paths and
// document names are the base package fsvalue, re-exported here. Its
// request and response types are the official protos (firestorepb), so the
// gRPC adapter is a pass-through; every method takes the caller's identity
// explicitly.
package firestore

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/proto"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/firestore/fsvalue"
	"github.com/pyric/pyric/identity"
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

// Persister durably records committed document states. Commit is called
// after all checks passed and before the commits it carries become visible
// (to readers and listeners) or are acknowledged, without the database
// lock held, one call at a time per database. One call may carry several
// consecutive commits merged (each path's last state, commitTime the last
// commit's). If it fails, those commits and the ones queued behind them
// fail and nothing of them remains.
type Persister interface {
	Commit(db DatabaseName, commitTime time.Time, changes []Change) error
}

// Change is a document's new state in one commit; Doc is nil for a delete.
type Change struct {
	Path string
	Doc  *pb.Document
	// Data is Doc's deterministic protobuf encoding when the engine hands
	// the change to a Persister (which may store it as is); the engine
	// keeps it, so it must not be modified.
	Data []byte
}

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

// database is one projects/P/databases/D.
type database struct {
	e    *Engine
	name DatabaseName

	mu     sync.RWMutex
	docs   map[string]*docEntry            // relative path -> entry
	colls  map[string]map[string]*docEntry // collection path -> entries
	groups map[string]map[string]*docEntry // collection id -> entries
	last   time.Time                       // last commit time (durable or not)
	// visible is the last commit time readers see: a commit's versions are
	// in docs from the moment it is checked, but reads happen at visible,
	// which only moves once the commit is durable.
	visible time.Time
	since   time.Time // oldest time history is complete from
	txns    map[string]*txn
	// hist lists superseded versions oldest first (from histHead on), for
	// trimming the history by age and bytes (history.go).
	hist      []historyItem
	histHead  int
	histBytes int

	// fidx are the single-field indexes (fieldindex.go), by scope and
	// field; fidxScopes lists them by scope. fidxMu guards both maps.
	fidxMu     sync.Mutex
	fidx       map[string]*fieldIndex
	fidxScopes map[string][]*fieldIndex

	hub   *hub
	gc    groupCommit
	cache docCache
}

// docEntry is one document path's versions, oldest first; a nil doc is a
// deletion. The last version is the latest state. The version list is
// published behind an atomic pointer and never changed within its length:
// writers (holding db.mu exclusively) append to it in place past that
// length, which no reader of the published list looks at (so a document
// with a deep history does not copy it on every write), and publish the
// longer list; a list cut short (rollback) is clipped, so that no later
// append overwrites what an older reader may still read. A scan may so
// read entries it collected after releasing the lock.
type docEntry struct {
	path string
	vs   atomic.Pointer[[]version]
}

// version is a document's state from t on: doc (in memory), or enc
// (durable: encoded, decoded while in the cache); neither is a deletion.
type version struct {
	t   time.Time
	doc *pb.Document
	enc *encodedDoc
}

// document returns the version's document, nil for a deletion.
func (v version) document() *pb.Document {
	if v.enc != nil {
		return v.enc.decode()
	}
	return v.doc
}

// deleted reports whether the version is a deletion.
func (v version) deleted() bool { return v.doc == nil && v.enc == nil }

// size estimates the memory keeping the version costs, besides
// versionOverhead: the Go heap its document takes.
func (v version) size() int {
	switch {
	case v.enc != nil:
		n := len(v.enc.raw) + 32
		if d := v.enc.doc.Load(); d != nil {
			n += docHeapSize(d)
		}
		return n
	case v.doc != nil:
		return docHeapSize(v.doc)
	}
	return 0
}

// versions returns the current version list; do not modify it.
func (d *docEntry) versions() []version {
	if p := d.vs.Load(); p != nil {
		return *p
	}
	return nil
}

func (d *docEntry) setVersions(v []version) { d.vs.Store(&v) }

func (d *docEntry) current() *pb.Document {
	vs := d.versions()
	return vs[len(vs)-1].document()
}

// at returns the document as of t (nil when absent at t).
func (d *docEntry) at(t time.Time) *pb.Document {
	vs := d.versions()
	for i := len(vs) - 1; i >= 0; i-- {
		if !vs[i].t.After(t) {
			return vs[i].document()
		}
	}
	return nil
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

// db returns (creating) the database.
func (e *Engine) db(name DatabaseName) *database {
	e.mu.Lock()
	defer e.mu.Unlock()
	db, ok := e.dbs[name]
	if !ok {
		db = &database{e: e, name: name, docs: map[string]*docEntry{},
			colls: map[string]map[string]*docEntry{}, groups: map[string]map[string]*docEntry{},
			txns: map[string]*txn{}}
		db.hub = newHub(db)
		db.cache.limit = DecodedCacheBytes
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

// nextTime returns a commit time strictly after the last one, truncated to
// microseconds (Firestore's precision). Callers hold db.mu.
func (db *database) nextTime() time.Time {
	t := db.e.now().UTC().Truncate(time.Microsecond)
	if !t.After(db.last) {
		t = db.last.Add(time.Microsecond)
	}
	return t
}

// readTime returns the latest consistent time, the last durable commit;
// callers hold db.mu.
func (db *database) readTime() time.Time {
	if db.visible.IsZero() {
		return db.e.now().UTC().Truncate(time.Microsecond)
	}
	return db.visible
}

// get returns the latest document at rel (nil if none), including commits
// not yet durable: it is the writer's view (preconditions, transaction
// validation). Reads use getAt(rel, readTime()). Callers hold db.mu.
func (db *database) get(rel string) *pb.Document {
	if d, ok := db.docs[rel]; ok {
		return d.current()
	}
	return nil
}

// getAt returns the document at rel as of t; callers hold db.mu.
func (db *database) getAt(rel string, t time.Time) *pb.Document {
	if d, ok := db.docs[rel]; ok {
		return d.at(t)
	}
	return nil
}

// publish makes the commit at t visible; callers hold db.mu.
func (db *database) publish(t time.Time) {
	if t.After(db.visible) {
		db.visible = t
	}
}

// apply installs the new states at commit time t; callers hold db.mu. They
// are visible to reads once publish(t) runs.
func (db *database) apply(t time.Time, changes []Change) {
	db.last = t
	for _, c := range changes {
		d, ok := db.docs[c.Path]
		if !ok {
			if c.Doc == nil {
				continue
			}
			d = &docEntry{path: c.Path}
			db.docs[c.Path] = d
			coll := fsvalue.CollectionOf(c.Path)
			if db.colls[coll] == nil {
				db.colls[coll] = map[string]*docEntry{}
			}
			db.colls[coll][c.Path] = d
			id := coll[lastSlash(coll)+1:]
			if db.groups[id] == nil {
				db.groups[id] = map[string]*docEntry{}
			}
			db.groups[id][c.Path] = d
		}
		db.superseded(d, t)
		v := version{t: t, doc: c.Doc}
		if db.e.opts.Persister != nil && c.Doc != nil {
			// Durable: the flusher gives it its encoding (compact).
			x := &encodedDoc{cache: &db.cache}
			x.doc.Store(c.Doc)
			v = version{t: t, enc: x}
		}
		d.setVersions(append(d.versions(), v))
	}
	db.trimHistory(t)
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

// clear drops every document and transaction; callers hold db.mu.
func (db *database) clear() {
	db.docs = map[string]*docEntry{}
	db.colls = map[string]map[string]*docEntry{}
	db.groups = map[string]map[string]*docEntry{}
	db.txns = map[string]*txn{}
	db.since = db.last
	db.hist, db.histHead, db.histBytes = nil, 0, 0
	db.cache.reset()
	db.dropIndexes()
}

// Reset deletes every document of every database (no events per document,
// no persistence call: the owner clears its store itself). Listeners see
// the documents disappear.
func (e *Engine) Reset() {
	for _, db := range e.databases() {
		db.mu.Lock()
		db.last = db.nextTime()
		db.clear()
		t := db.last
		db.publish(t)
		db.mu.Unlock()
		db.hub.notify(t, nil, true)
	}
}

// Restore loads documents into a database without rules, events or
// persistence: it is how a persisted store or a snapshot is brought back.
// Documents keep their create and update times when set; otherwise they get
// the restore time. Listeners are refreshed.
func (e *Engine) Restore(name DatabaseName, docs []*pb.Document) error {
	db := e.db(name)
	db.mu.Lock()
	t := db.nextTime()
	var changes []Change
	for _, d := range docs {
		dn, rel, err := ParseDocumentName(d.GetName())
		if err != nil {
			db.mu.Unlock()
			return err
		}
		if dn != name {
			db.mu.Unlock()
			return fsvalue.Errorf(ErrInvalidArgument, "Document %q is not in database %s.", d.GetName(), name)
		}
		d = proto.Clone(d).(*pb.Document)
		if err := validateFields(d.Fields); err != nil {
			db.mu.Unlock()
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
	db.apply(t, changes)
	db.publish(t)
	db.dropIndexes()
	// History before a restore is unknown.
	if db.since.Before(t) {
		db.since = t
	}
	db.mu.Unlock()
	db.hub.notify(t, nil, true)
	return nil
}

// Dump returns every current document of a database, in name order.
func (e *Engine) Dump(name DatabaseName) []*pb.Document {
	db := e.db(name)
	db.mu.RLock()
	defer db.mu.RUnlock()
	out := make([]*pb.Document, 0, len(db.docs))
	at := db.readTime()
	for _, d := range db.docs {
		if doc := d.at(at); doc != nil {
			out = append(out, doc)
		}
	}
	slices.SortFunc(out, func(a, b *pb.Document) int { return fsvalue.CompareNames(a.Name, b.Name) })
	return out
}

// emit sends an event, filling the service.
// groupID mints an id shared by the events of one batch or transaction.
func (e *Engine) groupID(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, e.seq.Add(1))
}

// authorize asks the rules unless the caller is admin.
func (e *Engine) authorize(ctx context.Context, req *AuthzRequest) Decision {
	if req.Auth.IsAdmin() {
		return Decision{Verdict: Allow, Reason: "admin bypasses rules"}
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

// event renders it into the event's Seen.
func (s *seenRequest) event(into *event.Seen, db DatabaseName) {
	if s == nil || into == nil {
		return
	}
	into.Time = s.time
	if s.after != nil {
		into.After = &event.Resource{Exists: true, Data: EncodeFields(s.after.Fields, db)}
	}
	for _, r := range s.reads {
		l := event.Lookup{Function: r.fn, Path: r.path, Exists: r.doc != nil}
		if r.doc != nil {
			l.Data = EncodeFields(r.doc.Fields, db)
		}
		into.Lookups = append(into.Lookups, l)
	}
}

// lookup returns a Lookup over the latest state (the writer's view, for
// the rules of a commit); the caller holds db.mu.
func (db *database) lookup() Lookup {
	return func(path string) (*pb.Document, error) {
		if err := ValidateDocumentPath(path); err != nil {
			return nil, err
		}
		return db.get(path), nil
	}
}

// lookupAt returns a Lookup over the state at t (for the rules of a read);
// the caller holds db.mu.
func (db *database) lookupAt(t time.Time) Lookup {
	return func(path string) (*pb.Document, error) {
		if err := ValidateDocumentPath(path); err != nil {
			return nil, err
		}
		return db.getAt(path, t), nil
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
