package fsstore

import (
	"slices"
	"strings"
	"sync"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/google/btree"

	"github.com/pyric/pyric/firestore/fsvalue"
)

// Indexes: for a collection (or a collection group) and a tuple of fields,
// the documents having every field, ordered by (values..., name) as
// Firestore orders them — single-field indexes, and composite ones for
// equality filters followed by an order (production's composite indexes,
// built here on demand, since the emulator never requires them
// declared). An index is built on the first query that can use it and
// then kept up to date as commits become visible, so it always describes
// the visible state; queries at that time (the default read) use
// it, older reads and the writer's view scan. The query planner (package firestore) walks one index
// from the query's bound in the query's direction, checks every document
// it meets against the whole query, and stops once the limit is reached,
// so such a query costs about what its results cost instead of the
// collection's size.

// Declared indexes (Declare: the composite indexes and field overrides
// of firestore.indexes.json) are built when they are declared and rebuilt
// after a reset or restore — beside traffic, in a goroutine that holds
// the lock shared a few hundred documents at a time, while commits keep
// the index being built up to date; a query uses one only once it is
// complete (until then it scans, as without it) — and created for a
// collection the moment its first document becomes visible, so no query
// pays for building them;
// an index field may be an array-contains one (Contains: the document is
// in the index once per distinct element of the array). The planner may
// walk any maintained index whose leading fields its equality and
// array-contains filters fix.

// MaxIndexes bounds the indexes one database builds on demand (memory:
// about 100 bytes per indexed document each); past it queries scan.
// Declared indexes do not count: they are what the project asked for.
const MaxIndexes = 64

// idxItem is one document in an index, or (with d nil) a search pivot;
// top makes a pivot sort after every item sharing its values.
type idxItem struct {
	vals []*pb.Value
	rel  string
	d    *Entry
	top  bool
}

func cmpItem(a, b idxItem) int {
	n := min(len(a.vals), len(b.vals))
	for i := range n {
		if c := fsvalue.Compare(a.vals[i], b.vals[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(a.vals) == len(b.vals):
		if a.top != b.top {
			if a.top {
				return 1
			}
			return -1
		}
		return fsvalue.CompareNames(a.rel, b.rel)
	case len(a.vals) < len(b.vals):
		if a.top {
			return 1
		}
		return -1
	default:
		if b.top {
			return -1
		}
		return 1
	}
}

func lessItem(a, b idxItem) bool { return cmpItem(a, b) < 0 }

// IndexField is one field of an index: its path, and whether it is an
// array-contains field, whose entries are the array's distinct elements
// (a document whose field is not a non-empty array is not in the index).
type IndexField struct {
	Path     fsvalue.FieldPath
	Contains bool
}

func (f IndexField) String() string {
	if f.Contains {
		return f.Path.String() + " CONTAINS"
	}
	return f.Path.String()
}

// Index is one field index: the documents of a scope having every field,
// ordered by (values..., name) as Firestore orders them.
type Index struct {
	scope    Scope
	fields   []IndexField
	declared bool
	bt       *btree.BTreeG[idxItem]
	// vals maps a document path to its entries' values, one tuple of
	// len(fields) after another (several only with a Contains field).
	vals map[string][]*pb.Value
	// While the index is built beside traffic (buildBeside), only the
	// build changes it: commits queue their changes (under mu, a moment)
	// for the build to apply, and mark the documents in touched, which
	// the build, having read them earlier, then leaves to the queue.
	mu      sync.Mutex
	queue   []queued
	touched map[string]bool
}

// queued is a commit's change to an index being built.
type queued struct {
	rel string
	d   *Entry
	doc *pb.Document
}

// Fields returns the index's fields; do not modify them.
func (ix *Index) Fields() []IndexField { return ix.fields }

// Declared reports whether the index was declared (Declare) rather than
// built on demand.
func (ix *Index) Declared() bool { return ix.declared }

// Declared is one index to maintain from the start: over every collection
// whose id is Collection, each by itself (Group false, Firestore's
// COLLECTION scope) or all together (Group, COLLECTION_GROUP).
type Declared struct {
	Group      bool
	Collection string
	Fields     []IndexField
}

// IndexInfo describes one maintained index.
type IndexInfo struct {
	Scope    Scope
	Fields   []IndexField
	Declared bool
	Entries  int // index entries (documents, or elements of their arrays)
	Docs     int // documents in the index
	// Building says the index is being built beside traffic: queries do
	// not use it yet (Entries and Docs are 0 until it is complete).
	Building bool
}

// Scope names the documents an index ranges over: the collection at
// Path, or (Group) every collection whose id is Path.
type Scope struct {
	Group bool
	Path  string
}

func (sc Scope) key() string {
	if sc.Group {
		return "g:" + sc.Path
	}
	return "c:" + sc.Path
}

func (s *Store) entries(sc Scope) []map[string]*Entry {
	if sc.Group {
		return s.Group(sc.Path)
	}
	return []map[string]*Entry{s.colls[sc.Path]}
}

func (ix *Index) set(rel string, d *Entry, doc *pb.Document) {
	var vals []*pb.Value
	if doc != nil {
		vals = ix.tuples(doc)
	}
	ix.put(rel, d, vals)
}

// put replaces the document's entries with vals (tuples; none: it is
// not in the index).
func (ix *Index) put(rel string, d *Entry, vals []*pb.Value) {
	n := len(ix.fields)
	if old, ok := ix.vals[rel]; ok {
		for i := 0; i < len(old); i += n {
			ix.bt.Delete(idxItem{vals: old[i : i+n], rel: rel})
		}
		delete(ix.vals, rel)
	}
	for i := 0; i < len(vals); i += n {
		ix.bt.ReplaceOrInsert(idxItem{vals: vals[i : i+n : i+n], rel: rel, d: d})
	}
	if len(vals) > 0 {
		ix.vals[rel] = vals
	}
}

// tuples returns the document's entries in the index, flattened: one
// tuple of values per combination of its Contains fields' distinct
// elements (one tuple without such fields), none when a field is missing.
func (ix *Index) tuples(doc *pb.Document) []*pb.Value {
	if !slices.ContainsFunc(ix.fields, func(f IndexField) bool { return f.Contains }) {
		vals := make([]*pb.Value, len(ix.fields))
		for i, f := range ix.fields {
			if vals[i] = fsvalue.GetField(doc.Fields, f.Path); vals[i] == nil {
				return nil
			}
		}
		return vals
	}
	per := make([][]*pb.Value, len(ix.fields))
	count := 1
	for i, f := range ix.fields {
		v := fsvalue.GetField(doc.Fields, f.Path)
		if v == nil {
			return nil
		}
		if !f.Contains {
			per[i] = []*pb.Value{v}
			continue
		}
		// Equal elements (1 and 1.0 among them) are one entry: the
		// index's order cannot tell them apart.
		elems := slices.Clone(v.GetArrayValue().GetValues())
		slices.SortFunc(elems, fsvalue.Compare)
		elems = slices.CompactFunc(elems, fsvalue.SameValue)
		if len(elems) == 0 {
			return nil
		}
		per[i] = elems
		count *= len(elems)
	}
	n := len(ix.fields)
	out := make([]*pb.Value, count*n)
	for t := range count {
		k := t
		for i := n - 1; i >= 0; i-- {
			out[t*n+i] = per[i][k%len(per[i])]
			k /= len(per[i])
		}
	}
	return out
}

// build fills the index from the documents of its scope visible now.
func (s *Store) build(ix *Index) {
	at := s.ReadTime()
	for _, m := range s.entries(ix.scope) {
		for rel, d := range m {
			ix.set(rel, d, d.At(at))
		}
	}
}

func indexKey(sc Scope, fields []IndexField) string {
	key := sc.key()
	for _, f := range fields {
		if f.Contains {
			key += "\x00c:" + f.Path.String()
		} else {
			key += "\x00f:" + f.Path.String()
		}
	}
	return key
}

// install registers ix; callers hold fidxMu.
func (s *Store) install(ix *Index) {
	if s.fidx == nil {
		s.fidx = map[string]*Index{}
		s.fidxScopes = map[string][]*Index{}
	}
	key, scope := indexKey(ix.scope, ix.fields), ix.scope.key()
	if old, ok := s.fidx[key]; ok {
		// built on demand while the declared one was being built
		s.fidxScopes[scope] = slices.DeleteFunc(s.fidxScopes[scope], func(x *Index) bool { return x == old })
		if !old.declared {
			s.onDemand--
		}
	}
	s.fidx[key] = ix
	s.fidxScopes[scope] = append(s.fidxScopes[scope], ix)
	if !ix.declared {
		s.onDemand++
	}
}

func newIndex(sc Scope, fields []IndexField, declared bool) *Index {
	return &Index{scope: sc, fields: fields, declared: declared, bt: btree.NewG(32, lessItem), vals: map[string][]*pb.Value{}}
}

// Index returns the index of fps over the scope, building it from the
// visible state on first use; nil when the budget of indexes is spent.
// Callers hold the lock (shared is enough: writers, which update indexes,
// hold it exclusively).
func (s *Store) Index(sc Scope, fps []fsvalue.FieldPath) *Index {
	fields := make([]IndexField, len(fps))
	for i, fp := range fps {
		fields[i] = IndexField{Path: fp}
	}
	key := indexKey(sc, fields)
	s.fidxMu.Lock()
	defer s.fidxMu.Unlock()
	if ix, ok := s.fidx[key]; ok {
		return ix
	}
	if _, ok := s.building[key]; ok || s.onDemand >= MaxIndexes {
		// Being built beside traffic: building it here too would hold
		// the lock for the whole build.
		return nil
	}
	ix := newIndex(sc, fields, false)
	s.build(ix)
	s.install(ix)
	return ix
}

// Indexes returns the indexes maintained over the scope (declared and
// built on demand), for the planner to choose from; callers hold the
// lock and do not modify the slice.
func (s *Store) Indexes(sc Scope) []*Index {
	s.fidxMu.Lock()
	defer s.fidxMu.Unlock()
	return s.fidxScopes[sc.key()]
}

// Declare replaces the declared indexes with ds and starts building them
// from the visible state beside traffic (indexes built on demand are
// forgotten too, and rebuilt on demand); callers hold the lock
// exclusively. WaitIndexes waits for the builds.
func (s *Store) Declare(ds []Declared) {
	s.dropIndexes()
	s.fidxMu.Lock()
	defer s.fidxMu.Unlock()
	s.declared = nil
	s.declColl = nil
	seen := map[string]bool{}
	for _, d := range ds {
		k := indexKey(Scope{Group: d.Group, Path: d.Collection}, d.Fields)
		if seen[k] || len(d.Fields) == 0 || d.Collection == "" {
			continue
		}
		seen[k] = true
		d.Fields = slices.Clone(d.Fields)
		s.declared = append(s.declared, d)
		if !d.Group {
			if s.declColl == nil {
				s.declColl = map[string][]Declared{}
			}
			s.declColl[d.Collection] = append(s.declColl[d.Collection], d)
		}
	}
	s.buildDeclared()
}

// buildDeclared starts building every declared index from the visible
// state beside traffic (buildBeside); callers hold the lock exclusively
// and fidxMu.
func (s *Store) buildDeclared() {
	s.buildGen++
	s.building = nil
	var todo []*Index
	for _, d := range s.declared {
		if d.Group {
			todo = append(todo, s.startBuild(Scope{Group: true, Path: d.Collection}, d.Fields))
			continue
		}
		for coll := range s.colls {
			if coll[lastSlash(coll)+1:] == d.Collection {
				todo = append(todo, s.startBuild(Scope{Path: coll}, d.Fields))
			}
		}
	}
	if len(todo) == 0 {
		return
	}
	s.builds++
	go s.buildBeside(s.buildGen, todo)
}

// startBuild registers a declared index to build beside traffic;
// callers hold the lock exclusively and fidxMu.
func (s *Store) startBuild(sc Scope, fields []IndexField) *Index {
	ix := newIndex(sc, fields, true)
	ix.touched = map[string]bool{}
	if s.building == nil {
		s.building = map[string]*Index{}
	}
	s.building[indexKey(sc, fields)] = ix
	return ix
}

// buildBatch is how many documents a build takes from the store per
// hold of the lock (shared, and only to walk the collection's map).
const buildBatch = 512

// maxBuildPause bounds the pause buildBeside takes after each batch.
const maxBuildPause = 10 * time.Millisecond

// buildBeside builds the indexes of generation gen, one after another,
// and installs each once complete. It holds the store's lock (shared)
// only to take the next buildBatch documents of the scope, reads them
// and computes their entries without it (a document's versions need no
// lock), and inserts them without any lock: it alone changes the index.
// Commits meanwhile queue their changes to it (indexChanges), which the
// build applies, and mark what they changed, which the build's own read
// then leaves to the queue, so it ends exactly current: a document the
// walk reads is indexed as visible then unless a commit changed it
// since; one created after the walk passed is indexed by its commit. A newer Declare, reset or restore makes the build stop.
func (s *Store) buildBeside(gen uint64, todo []*Index) {
	defer func() {
		s.fidxMu.Lock()
		s.builds--
		s.buildDone.Broadcast()
		s.fidxMu.Unlock()
	}()
	current := func() bool {
		s.fidxMu.Lock()
		defer s.fidxMu.Unlock()
		return s.buildGen == gen
	}
	type item struct {
		rel  string
		d    *Entry
		vals []*pb.Value
	}
	batch := make([]item, 0, buildBatch)
	flush := func(ix *Index, at time.Time) {
		for i := range batch {
			if doc := batch[i].d.At(at); doc != nil {
				batch[i].vals = ix.tuples(doc)
			}
		}
		ix.mu.Lock()
		q := ix.queue
		ix.queue = nil
		kept := batch[:0]
		for _, it := range batch {
			if !ix.touched[it.rel] {
				kept = append(kept, it)
			}
		}
		ix.mu.Unlock()
		for _, c := range q {
			ix.set(c.rel, c.d, c.doc)
		}
		for _, it := range kept {
			ix.put(it.rel, it.d, it.vals)
		}
		batch = batch[:0]
	}
	for _, ix := range todo {
		s.RLock()
		if !current() {
			s.RUnlock()
			return
		}
		at := s.ReadTime()
		for _, m := range s.entries(ix.scope) {
			// The map may change between batches (under the lock, so
			// safely): entries added meanwhile reach the index through
			// their commits whether or not the walk meets them.
			for rel, d := range m {
				batch = append(batch, item{rel: rel, d: d})
				if len(batch) < buildBatch {
					continue
				}
				s.RUnlock()
				t0 := time.Now()
				flush(ix, at)
				// About half of a core: the traffic beside keeps
				// the rest, and the garbage the build makes is collected
				// at half the pace (on two cores, a build at full speed
				// multiplies the p99 of commits beside it many times).
				// Capped: on a starved machine a batch's wall time is
				// mostly waiting for a CPU, and sleeping that long again
				// lets the commits' queue outgrow the build for good.
				time.Sleep(min(time.Since(t0), maxBuildPause))
				s.RLock()
				if !current() {
					s.RUnlock()
					return
				}
				at = s.ReadTime()
			}
		}
		s.RUnlock()
		flush(ix, at)
		s.Lock()
		s.fidxMu.Lock()
		key := indexKey(ix.scope, ix.fields)
		if s.buildGen == gen && s.building[key] == ix {
			// No commit runs now: what they queued since is the rest.
			for _, c := range ix.queue {
				ix.set(c.rel, c.d, c.doc)
			}
			delete(s.building, key)
			ix.queue, ix.touched = nil, nil
			s.install(ix)
		}
		s.fidxMu.Unlock()
		s.Unlock()
	}
}

// WaitIndexes waits until no declared index is being built.
func (s *Store) WaitIndexes() {
	s.fidxMu.Lock()
	defer s.fidxMu.Unlock()
	for s.builds > 0 {
		s.buildDone.Wait()
	}
}

// declareColl builds the declared index d over the collection at coll
// (its first document just became visible) unless it exists or is being
// built; callers hold the lock exclusively and fidxMu.
func (s *Store) declareColl(coll string, d Declared) {
	sc := Scope{Path: coll}
	key := indexKey(sc, d.Fields)
	if ix, ok := s.fidx[key]; ok {
		if !ix.declared {
			ix.declared = true
			s.onDemand--
		}
		return
	}
	if _, ok := s.building[key]; ok {
		return
	}
	ix := newIndex(sc, d.Fields, true)
	s.build(ix)
	s.install(ix)
}

// IndexInfos describes every maintained index, sorted by scope and
// fields; callers hold the lock (shared is enough).
func (s *Store) IndexInfos() []IndexInfo {
	s.fidxMu.Lock()
	defer s.fidxMu.Unlock()
	out := make([]IndexInfo, 0, len(s.fidx))
	for _, ix := range s.fidx {
		out = append(out, IndexInfo{Scope: ix.scope, Fields: slices.Clone(ix.fields), Declared: ix.declared,
			Entries: ix.bt.Len(), Docs: len(ix.vals)})
	}
	for _, ix := range s.building {
		out = append(out, IndexInfo{Scope: ix.scope, Fields: slices.Clone(ix.fields), Declared: true, Building: true})
	}
	slices.SortFunc(out, func(a, b IndexInfo) int {
		if c := strings.Compare(a.Scope.key(), b.Scope.key()); c != 0 {
			return c
		}
		return slices.CompareFunc(a.Fields, b.Fields, func(x, y IndexField) int { return strings.Compare(x.String(), y.String()) })
	})
	return out
}

// indexChanges brings the indexes to a newly visible commit; callers hold
// the lock exclusively.
func (s *Store) indexChanges(changes []Change) {
	s.fidxMu.Lock()
	defer s.fidxMu.Unlock()
	if len(s.fidx) == 0 && len(s.declColl) == 0 && len(s.building) == 0 {
		return
	}
	for _, c := range changes {
		coll := fsvalue.CollectionOf(c.Path)
		d := s.docs[c.Path]
		id := coll[lastSlash(coll)+1:]
		if c.Doc != nil {
			// A collection's declared indexes exist from its first
			// document on (built from the visible state, which holds it).
			for _, dc := range s.declColl[id] {
				s.declareColl(coll, dc)
			}
		}
		for _, scope := range [2]string{"c:" + coll, "g:" + id} {
			for _, ix := range s.fidxScopes[scope] {
				ix.set(c.Path, d, c.Doc)
			}
		}
		for _, ix := range s.building {
			if sc := ix.scope; (!sc.Group && sc.Path == coll) || (sc.Group && sc.Path == id) {
				ix.mu.Lock()
				ix.queue = append(ix.queue, queued{rel: c.Path, d: d, doc: c.Doc})
				ix.touched[c.Path] = true
				ix.mu.Unlock()
			}
		}
	}
}

// dropIndexes forgets every index; callers hold the lock exclusively.
func (s *Store) dropIndexes() {
	s.fidxMu.Lock()
	s.fidx, s.fidxScopes, s.onDemand = nil, nil, 0
	s.building = nil
	s.buildGen++ // a build in progress stops
	s.fidxMu.Unlock()
}

// rebuildIndexes forgets every index and builds the declared ones again
// (after a reset or restore; the others are rebuilt on demand); callers
// hold the lock exclusively.
func (s *Store) rebuildIndexes() {
	s.dropIndexes()
	s.fidxMu.Lock()
	s.buildDeclared()
	s.fidxMu.Unlock()
}

// IndexItem is one document in an index: its values of the index's
// fields, its path and its entry (read it at the time the walk is for).
type IndexItem struct {
	Vals  []*pb.Value
	Path  string
	Entry *Entry
}

// Ascend walks the documents whose leading values equal prefix, in index
// order, from the first whose next value is at least lower (nil: from the
// first), until fn returns false. Callers hold the lock.
func (ix *Index) Ascend(prefix []*pb.Value, lower *pb.Value, fn func(IndexItem) bool) {
	f := func(it idxItem) bool { return fn(IndexItem{Vals: it.vals, Path: it.rel, Entry: it.d}) }
	switch {
	case lower != nil:
		ix.bt.AscendGreaterOrEqual(idxItem{vals: append(slices.Clone(prefix), lower)}, f)
	case len(prefix) > 0:
		ix.bt.AscendGreaterOrEqual(idxItem{vals: prefix}, f)
	default:
		ix.bt.Ascend(f)
	}
}

// Descend walks the documents whose leading values equal prefix, in
// reverse index order, from the last whose next value is at most upper
// (nil: from the last), until fn returns false. Callers hold the lock.
func (ix *Index) Descend(prefix []*pb.Value, upper *pb.Value, fn func(IndexItem) bool) {
	f := func(it idxItem) bool { return fn(IndexItem{Vals: it.vals, Path: it.rel, Entry: it.d}) }
	switch {
	case upper != nil:
		ix.bt.DescendLessOrEqual(idxItem{vals: append(slices.Clone(prefix), upper), rel: "\xff"}, f)
	case len(prefix) > 0:
		ix.bt.DescendLessOrEqual(idxItem{vals: prefix, top: true}, f)
	default:
		ix.bt.Descend(f)
	}
}
