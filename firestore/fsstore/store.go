// Package fsstore is the storage layer of Pyric's Firestore engine: one
// database's versioned documents (each path's versions, readable at any
// time inside the kept history), their collection and collection-group
// maps, the history window bounded by age and bytes of memory, group
// commit to a Persister (concurrent commits share one store transaction
// and one sync; the lock is never held across it and reads never wait for
// it), durable documents kept in their stored encoding with a bounded
// cache of decoded ones (RestoreStored reopens a store without decoding),
// the field indexes (Index: single-field and composite, declared ones
// built up front and the others on demand, all brought up to date as each
// commit becomes visible, walked from a bound), and the publish hook through which each visible commit reaches
// the layers above (listeners). It knows nothing of queries,
// transactions, rules or events: package firestore builds those on it,
// and fsvalue is the data model both use.
package fsstore

import (
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pyric/pyric/firestore/fsvalue"
)

// Persister durably records committed document states. Commit is called
// after all checks passed and before the commits it carries become visible
// (to readers and listeners) or are acknowledged, without the database
// lock held, one call at a time per database. One call may carry several
// consecutive commits merged (each path's last state, commitTime the last
// commit's). If it fails, those commits and the ones queued behind them
// fail and nothing of them remains.
type Persister interface {
	Commit(db fsvalue.DatabaseName, commitTime time.Time, changes []Change) error
}

// HeldPersister is a Persister that also records, in the same durable
// write as a batch's changes, entries the committer asked it to keep
// with them (CommitHeld): the sandbox outbox's entries for the events of
// the commits, so that a crash after the commit cannot lose them.
type HeldPersister interface {
	Persister
	CommitHeld(db fsvalue.DatabaseName, commitTime time.Time, changes []Change, held []Held) error
}

// Held is an entry kept with a commit (see HeldPersister): a key and its
// value in the keeper's space, which the store does not read.
type Held struct {
	Key   string
	Value []byte
}

// Change is a document's new state in one commit; Doc is nil for a delete.
type Change struct {
	Path string
	Doc  *pb.Document
	// Data is Doc's deterministic protobuf encoding while the store hands
	// the change to a Persister, valid only during that call (the store
	// reuses its buffer): a Persister that keeps it copies it.
	Data []byte
}

// Options configure a Store.
type Options struct {
	// Name is the database the store holds (what the Persister is told).
	Name fsvalue.DatabaseName
	// Persister makes commits durable before they are visible; nil keeps
	// state in memory only.
	Persister Persister
	// History and HistoryBytes bound the superseded versions kept, by age
	// and by memory; both must be positive.
	History      time.Duration
	HistoryBytes int
	// Now is the clock commit times come from.
	Now func() time.Time
	// Publish is called, with the store locked exclusively, for each
	// commit as it becomes visible, in commit order: its changes (all is
	// false), or nil and all true after Reset, Restore and RestoreStored
	// (everything may have changed). nil means nothing is told.
	Publish func(t time.Time, changes []Change, all bool)
}

// Store is one database's documents. Its embedded lock is the database
// lock: methods documented "callers hold the lock" expect the caller to
// hold it (shared for reads, exclusively for changes), so that the layer
// above can make its own state (transactions) change atomically with the
// documents.
type Store struct {
	sync.RWMutex
	opts Options

	docs  map[string]*Entry            // relative path -> entry
	colls map[string]map[string]*Entry // collection path -> entries
	// groups lists, by collection id, the paths of the collections (keys
	// of colls) with that id: a collection group is the union of their
	// maps, so a document costs two map entries, not three.
	groups map[string][]string
	last   time.Time // last commit time (durable or not)
	// visible is the last commit time readers see: a commit's versions are
	// in docs from the moment it is checked, but reads happen at visible,
	// which only moves once the commit is durable.
	visible time.Time
	since   time.Time // oldest time history is complete from
	// hist lists superseded versions oldest first (from histHead on), for
	// trimming the history by age and bytes (history.go).
	hist      []historyItem
	histHead  int
	histBytes int

	// fidx are the field indexes (index.go), by scope and fields;
	// fidxScopes lists them by scope; onDemand counts those not declared.
	// declared are the declared indexes (Declare), declColl those of
	// COLLECTION scope by collection id. fidxMu guards them all.
	fidxMu     sync.Mutex
	fidx       map[string]*Index
	fidxScopes map[string][]*Index
	onDemand   int
	declared   []Declared
	declColl   map[string][]Declared
	// building are the declared indexes being built beside traffic
	// (buildBeside), by key: commits keep them up to date as they do
	// installed ones, queries do not see them until they are complete.
	// buildGen names the current set of declared indexes: a build of an
	// older one stops. builds counts the builders running (buildDone
	// signals their end). fidxMu guards them too.
	building  map[string]*Index
	buildGen  uint64
	builds    int
	buildDone *sync.Cond

	gc    groupCommit
	cache docCache

	// longReads counts the read sections begun by RLockLong; politeWaits
	// the times a writer waited beside them (longread.go).
	longReads   atomic.Int64
	politeWaits atomic.Int64
}

// New returns an empty store.
func New(opts Options) *Store {
	s := &Store{opts: opts, docs: map[string]*Entry{},
		colls: map[string]map[string]*Entry{}, groups: map[string][]string{}}
	s.buildDone = sync.NewCond(&s.fidxMu)
	s.cache.limit = DecodedCacheBytes
	s.cache.prefix = opts.Name.Documents() + "/"
	return s
}

// SetDecodedCacheLimit changes the bound of the decoded-document cache
// (DecodedCacheBytes by default); for tests and tuning.
func (s *Store) SetDecodedCacheLimit(n int) {
	s.cache.mu.Lock()
	s.cache.limit = n
	s.cache.mu.Unlock()
}

// Stats describes what the store holds.
type Stats struct {
	Documents int // paths with an entry (a deleted one kept as history included)
	Encoded   int // of them, latest versions kept encoded (durable)
	// DecodedCacheBytes is what the cache of decoded documents holds (by
	// DocHeapSize), DecodedCacheLimit its bound.
	DecodedCacheBytes, DecodedCacheLimit int
}

// Stats reports what the store holds; callers hold the lock. It walks
// every entry.
func (s *Store) Stats() Stats {
	st := Stats{Documents: len(s.docs)}
	for _, d := range s.docs {
		if vs := d.versions(); len(vs) > 0 && vs[len(vs)-1].enc != nil {
			st.Encoded++
		}
	}
	s.cache.mu.Lock()
	st.DecodedCacheBytes, st.DecodedCacheLimit = s.cache.bytes, s.cache.limit
	s.cache.mu.Unlock()
	return st
}

// Entry is one document path's versions, oldest first; a nil doc is a
// deletion. The last version is the latest state. The version list is
// published behind an atomic pointer and never changed within its length:
// writers (holding the lock exclusively) append to it in place past that
// length, which no reader of the published list looks at (so a document
// with a deep history does not copy it on every write), and publish the
// longer list; a list cut short (rollback) is clipped, so that no later
// append overwrites what an older reader may still read. A scan may so
// read entries it collected after releasing the lock.
type Entry struct {
	path string
	vs   atomic.Pointer[[]version]
}

// version is a document's state from its commit time on (at, in Unix
// nanoseconds: 8 bytes instead of a time.Time's 24, and nothing for the
// collector to follow): doc (in memory), or enc (durable: encoded, decoded
// while in the cache); neither is a deletion.
type version struct {
	at  int64
	doc *pb.Document
	enc *encodedDoc
}

// after reports whether the version was committed after t.
func (v version) after(t time.Time) bool { return v.at > nanos(t) }

// nanos is t in Unix nanoseconds, clamped to int64's range (commit times
// are in it; a read time far in the past or future sorts as they do).
func nanos(t time.Time) int64 {
	switch {
	case t.Before(minNanos):
		return math.MinInt64
	case t.After(maxNanos):
		return math.MaxInt64
	}
	return t.UnixNano()
}

var minNanos, maxNanos = time.Unix(0, math.MinInt64), time.Unix(0, math.MaxInt64)

// document returns the version's document at rel, nil for a deletion.
func (v version) document(rel string) *pb.Document {
	if v.enc != nil {
		return v.enc.decode(rel)
	}
	return v.doc
}

// deleted reports whether the version is a deletion.
func (v version) deleted() bool { return v.doc == nil && v.enc == nil }

// size estimates the memory keeping the version costs, besides
// VersionOverhead: the Go heap its document takes.
func (v version) size() int {
	switch {
	case v.enc != nil:
		n := len(v.enc.raw) + 32
		if d := v.enc.doc.Load(); d != nil {
			n += DocHeapSize(d)
		}
		return n
	case v.doc != nil:
		return DocHeapSize(v.doc)
	}
	return 0
}

// Path returns the entry's document path, relative to the database.
func (d *Entry) Path() string { return d.path }

// versions returns the current version list; do not modify it.
func (d *Entry) versions() []version {
	if p := d.vs.Load(); p != nil {
		return *p
	}
	return nil
}

func (d *Entry) setVersions(v []version) { d.vs.Store(&v) }

// Current returns the latest state, including commits not yet durable
// (nil when deleted).
func (d *Entry) Current() *pb.Document {
	vs := d.versions()
	return vs[len(vs)-1].document(d.path)
}

// At returns the document as of t (nil when absent at t). It needs no
// lock: the version list it reads is immutable within its length.
func (d *Entry) At(t time.Time) *pb.Document {
	if v, ok := d.versionAt(t); ok {
		return v.document(d.path)
	}
	return nil
}

// versionAt is the version current as of t; ok is false when the entry
// has none that old.
func (d *Entry) versionAt(t time.Time) (version, bool) {
	vs := d.versions()
	for i := len(vs) - 1; i >= 0; i-- {
		if !vs[i].after(t) {
			return vs[i], true
		}
	}
	return version{}, false
}

// ExistsAt reports whether the document exists as of t, without decoding
// it; like At it needs no lock.
func (d *Entry) ExistsAt(t time.Time) bool {
	vs := d.versions()
	for i := len(vs) - 1; i >= 0; i-- {
		if !vs[i].after(t) {
			return !vs[i].deleted()
		}
	}
	return false
}

// All returns every entry by path; callers hold the lock and do not
// modify the map.
func (s *Store) All() map[string]*Entry { return s.docs }

// Entry returns the entry at rel, nil when the path has none; callers
// hold the lock.
func (s *Store) Entry(rel string) *Entry { return s.docs[rel] }

// Collection returns the entries of the collection at path; callers hold
// the lock and do not modify the map.
func (s *Store) Collection(path string) map[string]*Entry { return s.colls[path] }

// Group returns the entries of every collection with the id, as one map
// per collection; callers hold the lock and do not modify the maps.
func (s *Store) Group(id string) []map[string]*Entry {
	paths := s.groups[id]
	out := make([]map[string]*Entry, len(paths))
	for i, c := range paths {
		out[i] = s.colls[c]
	}
	return out
}

// collection returns the map of the collection at coll, creating it
// (and listing it in its group) if needed; callers hold the lock
// exclusively.
func (s *Store) collection(coll string, size int) map[string]*Entry {
	m := s.colls[coll]
	if m == nil {
		m = make(map[string]*Entry, size)
		s.colls[coll] = m
		id := coll[lastSlash(coll)+1:]
		s.groups[id] = append(s.groups[id], coll)
	}
	return m
}

// NextTime returns a commit time strictly after the last one, truncated to
// microseconds (Firestore's precision). Callers hold the lock.
func (s *Store) NextTime() time.Time {
	t := s.opts.Now().UTC().Truncate(time.Microsecond)
	if !t.After(s.last) {
		t = s.last.Add(time.Microsecond)
	}
	return t
}

// ReadTime returns the latest consistent time, the last durable commit;
// callers hold the lock.
func (s *Store) ReadTime() time.Time {
	if s.visible.IsZero() {
		return s.opts.Now().UTC().Truncate(time.Microsecond)
	}
	return s.visible
}

// Last returns the last commit time, durable or not; callers hold the lock.
func (s *Store) Last() time.Time { return s.last }

// Since returns the oldest read time the kept history serves (zero: all of
// it); callers hold the lock.
func (s *Store) Since() time.Time { return s.since }

// Get returns the latest document at rel (nil if none), including commits
// not yet durable: it is the writer's view (preconditions, transaction
// validation). Reads use GetAt(rel, ReadTime()). Callers hold the lock.
func (s *Store) Get(rel string) *pb.Document {
	if d, ok := s.docs[rel]; ok {
		return d.Current()
	}
	return nil
}

// GetAt returns the document at rel as of t; callers hold the lock.
func (s *Store) GetAt(rel string, t time.Time) *pb.Document {
	if d, ok := s.docs[rel]; ok {
		return d.At(t)
	}
	return nil
}

// Commit installs the new states at commit time t (from NextTime, with
// the changes checked); callers hold the lock exclusively. In memory the
// commit is visible and published on return and the result is the zero
// Durable. With a Persister it is queued for group commit: the caller
// releases the lock and calls the result's Wait for the outcome; the
// commit is visible, published and acknowledged only once durable.
func (s *Store) Commit(t time.Time, changes []Change) Durable {
	return s.CommitHeld(t, changes, nil)
}

// CommitHeld is Commit, with held entries the Persister (a HeldPersister)
// records in the same durable write as the changes; in memory they are
// dropped.
func (s *Store) CommitHeld(t time.Time, changes []Change, held []Held) Durable {
	s.apply(t, changes)
	if s.opts.Persister == nil {
		s.publish(t)
		s.announce(t, changes, false)
		return Durable{}
	}
	return s.enqueue(t, changes, held)
}

// announce brings the field indexes to a newly visible commit (all:
// rebuilds the declared ones and forgets the others, rebuilt on demand)
// and calls the publish hook; callers hold the lock exclusively.
func (s *Store) announce(t time.Time, changes []Change, all bool) {
	if all {
		s.rebuildIndexes()
	} else {
		s.indexChanges(changes)
	}
	if s.opts.Publish != nil && (all || len(changes) > 0) {
		s.opts.Publish(t, changes, all)
	}
}

// publish makes the commit at t visible; callers hold the lock.
func (s *Store) publish(t time.Time) {
	if t.After(s.visible) {
		s.visible = t
	}
}

// apply installs the new states at commit time t; callers hold the lock.
// They are visible to reads once publish(t) runs.
func (s *Store) apply(t time.Time, changes []Change) {
	s.last = t
	for _, c := range changes {
		d, ok := s.docs[c.Path]
		if !ok {
			if c.Doc == nil {
				continue
			}
			// The path is usually part of a string the entry should not
			// keep alive (a request's document name: 4x longer).
			path := strings.Clone(c.Path)
			d = &Entry{path: path}
			s.docs[path] = d
			s.collection(fsvalue.CollectionOf(path), 0)[path] = d
		}
		s.superseded(d, t)
		v := version{at: t.UnixNano(), doc: c.Doc}
		if s.opts.Persister != nil && c.Doc != nil {
			// Durable: the flusher gives it its encoding (compact).
			x := &encodedDoc{cache: &s.cache}
			x.doc.Store(c.Doc)
			v = version{at: t.UnixNano(), enc: x}
		}
		d.setVersions(append(d.versions(), v))
	}
	s.trimHistory(t)
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

// Reset drops every document at a new commit time, which it returns, and
// publishes it (no persistence call: the owner clears its store itself);
// callers hold the lock exclusively.
func (s *Store) Reset() time.Time {
	s.last = s.NextTime()
	s.docs = map[string]*Entry{}
	s.colls = map[string]map[string]*Entry{}
	s.groups = map[string][]string{}
	s.since = s.last
	s.hist, s.histHead, s.histBytes = nil, 0, 0
	s.cache.reset()
	t := s.last
	s.publish(t)
	s.announce(t, nil, true)
	return t
}

// Restore installs documents (checked by the caller) at t, without
// persistence, makes them visible and publishes the store as all changed;
// the history before t is unknown from then on. Callers hold the lock
// exclusively.
func (s *Store) Restore(t time.Time, changes []Change) {
	s.apply(t, changes)
	s.publish(t)
	if s.since.Before(t) {
		s.since = t
	}
	s.announce(t, nil, true)
}

func ts(t time.Time) *timestamppb.Timestamp { return timestamppb.New(t) }
