package fsstore

import (
	"slices"

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

// MaxIndexes bounds the indexes one database builds (memory: about
// 100 bytes per indexed document each); past it queries scan.
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

// Index is one field index: the documents of a scope having every field
// of fps, ordered by (values..., name) as Firestore orders them.
type Index struct {
	fps  []fsvalue.FieldPath
	bt   *btree.BTreeG[idxItem]
	vals map[string][]*pb.Value // document path -> its indexed values
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
	if old, ok := ix.vals[rel]; ok {
		ix.bt.Delete(idxItem{vals: old, rel: rel})
		delete(ix.vals, rel)
	}
	if doc == nil {
		return
	}
	vals := make([]*pb.Value, len(ix.fps))
	for i, fp := range ix.fps {
		if vals[i] = fsvalue.GetField(doc.Fields, fp); vals[i] == nil {
			return
		}
	}
	ix.bt.ReplaceOrInsert(idxItem{vals: vals, rel: rel, d: d})
	ix.vals[rel] = vals
}

// Index returns the index of fps over the scope, building it from the
// visible state on first use; nil when the budget of indexes is spent.
// Callers hold the lock (shared is enough: writers, which update indexes,
// hold it exclusively).
func (s *Store) Index(sc Scope, fps []fsvalue.FieldPath) *Index {
	scope := sc.key()
	key := scope
	for _, fp := range fps {
		key += "\x00" + fp.String()
	}
	s.fidxMu.Lock()
	defer s.fidxMu.Unlock()
	if ix, ok := s.fidx[key]; ok {
		return ix
	}
	if len(s.fidx) >= MaxIndexes {
		return nil
	}
	ix := &Index{fps: fps, bt: btree.NewG(32, lessItem), vals: map[string][]*pb.Value{}}
	at := s.ReadTime()
	for _, m := range s.entries(sc) {
		for rel, d := range m {
			ix.set(rel, d, d.At(at))
		}
	}
	if s.fidx == nil {
		s.fidx = map[string]*Index{}
		s.fidxScopes = map[string][]*Index{}
	}
	s.fidx[key] = ix
	s.fidxScopes[scope] = append(s.fidxScopes[scope], ix)
	return ix
}

// indexChanges brings the indexes to a newly visible commit; callers hold
// the lock exclusively.
func (s *Store) indexChanges(changes []Change) {
	s.fidxMu.Lock()
	defer s.fidxMu.Unlock()
	if len(s.fidx) == 0 {
		return
	}
	for _, c := range changes {
		coll := fsvalue.CollectionOf(c.Path)
		d := s.docs[c.Path]
		for _, scope := range [2]string{"c:" + coll, "g:" + coll[lastSlash(coll)+1:]} {
			for _, ix := range s.fidxScopes[scope] {
				ix.set(c.Path, d, c.Doc)
			}
		}
	}
}

// dropIndexes forgets every index (after a reset or restore they are
// rebuilt on demand); callers hold the lock exclusively.
func (s *Store) dropIndexes() {
	s.fidxMu.Lock()
	s.fidx, s.fidxScopes = nil, nil
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
