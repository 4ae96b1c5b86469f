package firestore

import (
	"slices"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/google/btree"
)

// Single-field indexes: for a collection (or a collection group) and a
// field, the documents having the field, ordered by (value, name) as
// Firestore orders them. An index is built on the first query that can
// use it and then kept up to date as commits become visible, so it always
// describes the state at db.visible; queries at that time (the default
// read) use it, older reads and the writer's view scan. The planner walks
// one index from the query's bound in the query's direction, checks every
// document it meets against the whole query, and stops once the limit is
// reached, so such a query costs about what its results cost instead of
// the collection's size.

// maxFieldIndexes bounds the indexes one database builds (memory: about
// 100 bytes per indexed document each); past it queries scan.
const maxFieldIndexes = 64

type idxItem struct {
	v   *pb.Value
	rel string
	d   *docEntry
}

func lessItem(a, b idxItem) bool {
	if c := Compare(a.v, b.v); c != 0 {
		return c < 0
	}
	return compareNames(a.rel, b.rel) < 0
}

// fieldIndex is one single-field index.
type fieldIndex struct {
	fp   FieldPath
	bt   *btree.BTreeG[idxItem]
	vals map[string]*pb.Value // document path -> its indexed value
}

// scopeKey names the documents a query ranges over: one collection, or a
// collection group (all collections with the id).
func scopeKey(q *query) string {
	if q.allDesc {
		return "g:" + q.collID
	}
	return "c:" + q.collPath()
}

func (ix *fieldIndex) set(rel string, d *docEntry, doc *pb.Document) {
	if old, ok := ix.vals[rel]; ok {
		ix.bt.Delete(idxItem{v: old, rel: rel})
		delete(ix.vals, rel)
	}
	if doc == nil {
		return
	}
	if v := getField(doc.Fields, ix.fp); v != nil {
		ix.bt.ReplaceOrInsert(idxItem{v: v, rel: rel, d: d})
		ix.vals[rel] = v
	}
}

// index returns the index of fp over q's scope, building it from the
// visible state on first use; nil when the budget of indexes is spent.
// Callers hold db.mu (shared is enough: writers, which update indexes,
// hold it exclusively).
func (db *database) index(q *query, fp FieldPath) *fieldIndex {
	scope := scopeKey(q)
	key := scope + "\x00" + fp.String()
	db.fidxMu.Lock()
	defer db.fidxMu.Unlock()
	if ix, ok := db.fidx[key]; ok {
		return ix
	}
	if len(db.fidx) >= maxFieldIndexes {
		return nil
	}
	ix := &fieldIndex{fp: fp, bt: btree.NewG(32, lessItem), vals: map[string]*pb.Value{}}
	at := db.readTime()
	for rel, d := range db.candidates(q) {
		ix.set(rel, d, d.at(at))
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
// db.mu exclusively.
func (db *database) indexChanges(changes []Change) {
	db.fidxMu.Lock()
	defer db.fidxMu.Unlock()
	if len(db.fidx) == 0 {
		return
	}
	for _, c := range changes {
		coll := collectionOf(c.Path)
		d := db.docs[c.Path]
		for _, scope := range [2]string{"c:" + coll, "g:" + coll[lastSlash(coll)+1:]} {
			for _, ix := range db.fidxScopes[scope] {
				ix.set(c.Path, d, c.Doc)
			}
		}
	}
}

// dropIndexes forgets every index (after a reset or restore they are
// rebuilt on demand); callers hold db.mu exclusively.
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
// query: ok is false when the query must scan.
func (db *database) indexedMatching(q *query, t time.Time, current bool) ([]*pb.Document, bool) {
	if current || q.nearest != nil || (q.allDesc && q.collID == "") || !t.Equal(db.readTime()) {
		return nil, false
	}
	conj, ok := conjuncts(q.filter)
	if !ok {
		return nil, false
	}
	first := q.orders[0]
	var fp FieldPath
	var lower, upper *pb.Value
	if first.fp.IsName() {
		// Ordered by name only: walk the index of an equality filter's
		// field, whose equal values are in name order.
		for _, f := range conj {
			if f.kind == fField && f.op == pb.StructuredQuery_FieldFilter_EQUAL && !f.fp.IsName() {
				fp, lower, upper = f.fp, f.value, f.value
				break
			}
		}
		if fp == nil {
			return nil, false
		}
	} else {
		fp = first.fp
		for _, f := range conj {
			if f.kind != fField || !f.fp.Equal(fp) {
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
	ix := db.index(q, fp)
	if ix == nil {
		return nil, false
	}
	k := -1
	if q.limit >= 0 {
		k = q.offset + q.limit
	}
	// The walk's order is (value, name) in the walk's direction; when the
	// query orders ties on the first field differently, each run of equal
	// values is sorted by the full order before it is kept.
	exact := first.fp.IsName() || (len(q.orders) == 2 && q.orders[1].fp.IsName() && q.orders[1].desc == first.desc)
	var out, group []*pb.Document
	var groupV *pb.Value
	flush := func() {
		if len(group) > 1 && !exact {
			slices.SortFunc(group, q.cmpDocs)
		}
		out = append(out, group...)
		group = group[:0]
	}
	visit := func(it idxItem) bool {
		if !exact && groupV != nil && Compare(it.v, groupV) != 0 {
			flush()
		}
		if k >= 0 && len(out) >= k {
			return false
		}
		if !exact {
			groupV = it.v
		}
		doc := it.d.at(t)
		if q.matches(it.rel, doc) {
			if exact {
				out = append(out, doc)
			} else {
				group = append(group, doc)
			}
		}
		return true
	}
	walkDesc := first.desc
	if walkDesc {
		stop := func(it idxItem) bool { return lower != nil && Compare(it.v, lower) < 0 }
		fn := func(it idxItem) bool { return !stop(it) && visit(it) }
		if upper != nil {
			ix.bt.DescendLessOrEqual(idxItem{v: upper, rel: "\xff"}, fn)
		} else {
			ix.bt.Descend(fn)
		}
	} else {
		stop := func(it idxItem) bool { return upper != nil && Compare(it.v, upper) > 0 }
		fn := func(it idxItem) bool { return !stop(it) && visit(it) }
		if lower != nil {
			ix.bt.AscendGreaterOrEqual(idxItem{v: lower, rel: ""}, fn)
		} else {
			ix.bt.Ascend(fn)
		}
	}
	flush()
	if k >= 0 && len(out) > k {
		out = out[:k]
	}
	return out, true
}
