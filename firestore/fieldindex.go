package firestore

import (
	"slices"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/google/btree"

	"github.com/pyric/pyric/firestore/fsstore"
	"github.com/pyric/pyric/firestore/fsvalue"
)

// Indexes: for a collection (or a collection group) and a tuple of fields,
// the documents having every field, ordered by (values..., name) as
// Firestore orders them — single-field indexes, and composite ones for
// equality filters followed by an order (production's composite indexes,
// built here on demand, since the emulator never requires them
// declared). An index is built on the first query that can use it and
// then kept up to date as commits become visible, so it always describes
// the state at db.visible; queries at that time (the default read) use
// it, older reads and the writer's view scan. The planner walks one index
// from the query's bound in the query's direction, checks every document
// it meets against the whole query, and stops once the limit is reached,
// so such a query costs about what its results cost instead of the
// collection's size.

// maxFieldIndexes bounds the indexes one database builds (memory: about
// 100 bytes per indexed document each); past it queries scan.
const maxFieldIndexes = 64

// idxItem is one document in an index, or (with d nil) a search pivot;
// top makes a pivot sort after every item sharing its values.
type idxItem struct {
	vals []*pb.Value
	rel  string
	d    *fsstore.Entry
	top  bool
}

func cmpItem(a, b idxItem) int {
	n := min(len(a.vals), len(b.vals))
	for i := range n {
		if c := Compare(a.vals[i], b.vals[i]); c != 0 {
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

// fieldIndex is one index over the fields fps.
type fieldIndex struct {
	fps  []FieldPath
	bt   *btree.BTreeG[idxItem]
	vals map[string][]*pb.Value // document path -> its indexed values
}

// scopeKey names the documents a query ranges over: one collection, or a
// collection group (all collections with the id).
func scopeKey(q *query) string {
	if q.allDesc {
		return "g:" + q.collID
	}
	return "c:" + q.collPath()
}

func (ix *fieldIndex) set(rel string, d *fsstore.Entry, doc *pb.Document) {
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

// index returns the index of fps over q's scope, building it from the
// visible state on first use; nil when the budget of indexes is spent.
// Callers hold db.st's lock (shared is enough: writers, which update indexes,
// hold it exclusively).
func (db *database) index(q *query, fps []FieldPath) *fieldIndex {
	scope := scopeKey(q)
	key := scope
	for _, fp := range fps {
		key += "\x00" + fp.String()
	}
	db.fidxMu.Lock()
	defer db.fidxMu.Unlock()
	if ix, ok := db.fidx[key]; ok {
		return ix
	}
	if len(db.fidx) >= maxFieldIndexes {
		return nil
	}
	ix := &fieldIndex{fps: fps, bt: btree.NewG(32, lessItem), vals: map[string][]*pb.Value{}}
	at := db.readTime()
	for rel, d := range db.candidates(q) {
		ix.set(rel, d, d.At(at))
	}
	if db.fidx == nil {
		db.fidx = map[string]*fieldIndex{}
		db.fidxScopes = map[string][]*fieldIndex{}
	}
	db.fidx[key] = ix
	db.fidxScopes[scope] = append(db.fidxScopes[scope], ix)
	return ix
}

// indexChanges brings the indexes to a newly visible commit; callers hold
// db.st's lock exclusively.
func (db *database) indexChanges(changes []Change) {
	db.fidxMu.Lock()
	defer db.fidxMu.Unlock()
	if len(db.fidx) == 0 {
		return
	}
	for _, c := range changes {
		coll := fsvalue.CollectionOf(c.Path)
		d := db.st.Entry(c.Path)
		for _, scope := range [2]string{"c:" + coll, "g:" + coll[strings.LastIndexByte(coll, '/')+1:]} {
			for _, ix := range db.fidxScopes[scope] {
				ix.set(c.Path, d, c.Doc)
			}
		}
	}
}

// dropIndexes forgets every index (after a reset or restore they are
// rebuilt on demand); callers hold db.st's lock exclusively.
func (db *database) dropIndexes() {
	db.fidxMu.Lock()
	db.fidx, db.fidxScopes = nil, nil
	db.fidxMu.Unlock()
}

// conjuncts returns the filters of a query that is a conjunction of field
// and unary filters; ok is false for queries with OR.
func conjuncts(f *filter) ([]*filter, bool) {
	if f == nil {
		return nil, true
	}
	switch f.kind {
	case fField, fUnary:
		return []*filter{f}, true
	case fAnd:
		var out []*filter
		for _, s := range f.subs {
			sub, ok := conjuncts(s)
			if !ok {
				return nil, false
			}
			out = append(out, sub...)
		}
		return out, true
	}
	return nil, false
}

// indexedMatching answers matching from an index when one serves the
// query: ok is false when the query must scan. The index is the query's
// equality fields (in field order) followed by its first order field; the
// walk stays within the equality values and the order field's bounds.
func (db *database) indexedMatching(q *query, t time.Time, current bool) ([]*pb.Document, bool) {
	if current || q.nearest != nil || (q.allDesc && q.collID == "") || !t.Equal(db.readTime()) {
		return nil, false
	}
	conj, ok := conjuncts(q.filter)
	if !ok {
		return nil, false
	}
	first := q.orders[0]
	eq := map[string]*filter{}
	var eqFields []FieldPath
	for _, f := range conj {
		if f.kind == fField && f.op == pb.StructuredQuery_FieldFilter_EQUAL && !f.fp.IsName() && !f.fp.Equal(first.fp) {
			if _, dup := eq[f.fp.String()]; !dup {
				eq[f.fp.String()] = f
				eqFields = append(eqFields, f.fp)
			}
		}
	}
	slices.SortFunc(eqFields, compareFieldPaths)
	if len(eqFields) > 3 {
		eqFields = eqFields[:3] // the rest are checked on each document
	}
	var prefix []*pb.Value
	for _, fp := range eqFields {
		prefix = append(prefix, eq[fp.String()].value)
	}
	fps := slices.Clone(eqFields)
	var lower, upper *pb.Value
	if first.fp.IsName() {
		if len(fps) == 0 {
			return nil, false
		}
	} else {
		fps = append(fps, first.fp)
		for _, f := range conj {
			if f.kind != fField || !f.fp.Equal(first.fp) {
				continue
			}
			switch f.op {
			case pb.StructuredQuery_FieldFilter_EQUAL:
				lower, upper = f.value, f.value
			case pb.StructuredQuery_FieldFilter_GREATER_THAN, pb.StructuredQuery_FieldFilter_GREATER_THAN_OR_EQUAL:
				if lower == nil || Compare(f.value, lower) > 0 {
					lower = f.value
				}
			case pb.StructuredQuery_FieldFilter_LESS_THAN, pb.StructuredQuery_FieldFilter_LESS_THAN_OR_EQUAL:
				if upper == nil || Compare(f.value, upper) < 0 {
					upper = f.value
				}
			}
		}
	}
	ix := db.index(q, fps)
	if ix == nil {
		return nil, false
	}
	k := -1
	if q.limit >= 0 {
		k = q.offset + q.limit
	}
	// The walk's order is (values, name) in the walk's direction; when the
	// query orders ties on the first field differently, each run of equal
	// values is sorted by the full order before it is kept.
	exact := first.fp.IsName() || (len(q.orders) == 2 && q.orders[1].fp.IsName() && q.orders[1].desc == first.desc)
	last := len(fps) - 1
	var out, group []*pb.Document
	var groupV *pb.Value
	flush := func() {
		if len(group) > 1 && !exact {
			slices.SortFunc(group, q.cmpDocs)
		}
		out = append(out, group...)
		group = group[:0]
	}
	inPrefix := func(it idxItem) bool {
		for i, v := range prefix {
			if Compare(it.vals[i], v) != 0 {
				return false
			}
		}
		return true
	}
	visit := func(it idxItem) bool {
		if !exact && groupV != nil && Compare(it.vals[last], groupV) != 0 {
			flush()
		}
		if k >= 0 && len(out) >= k {
			return false
		}
		if !exact {
			groupV = it.vals[last]
		}
		doc := it.d.At(t)
		if q.matches(it.rel, doc) {
			if exact {
				out = append(out, doc)
			} else {
				group = append(group, doc)
			}
		}
		return true
	}
	if first.desc {
		fn := func(it idxItem) bool {
			if !inPrefix(it) || (lower != nil && Compare(it.vals[last], lower) < 0) {
				return false
			}
			return visit(it)
		}
		switch {
		case upper != nil:
			ix.bt.DescendLessOrEqual(idxItem{vals: append(slices.Clone(prefix), upper), rel: "\xff"}, fn)
		case len(prefix) > 0:
			ix.bt.DescendLessOrEqual(idxItem{vals: prefix, top: true}, fn)
		default:
			ix.bt.Descend(fn)
		}
	} else {
		fn := func(it idxItem) bool {
			if !inPrefix(it) || (upper != nil && Compare(it.vals[last], upper) > 0) {
				return false
			}
			return visit(it)
		}
		switch {
		case lower != nil:
			ix.bt.AscendGreaterOrEqual(idxItem{vals: append(slices.Clone(prefix), lower)}, fn)
		case len(prefix) > 0:
			ix.bt.AscendGreaterOrEqual(idxItem{vals: prefix}, fn)
		default:
			ix.bt.Ascend(fn)
		}
	}
	flush()
	if k >= 0 && len(out) > k {
		out = out[:k]
	}
	return out, true
}
