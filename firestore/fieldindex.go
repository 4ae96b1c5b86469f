package firestore

import (
	"slices"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/firestore/fsstore"
)

// Query planning over the storage layer's field indexes (fsstore.Index):
// a query that is a conjunction of filters with an order is answered by
// walking the index of its equality fields followed by its first order
// field, when the read is at the visible time; everything else scans.

// scopeOf names the documents a query ranges over for the indexes.
func scopeOf(q *query) fsstore.Scope {
	if q.allDesc {
		return fsstore.Scope{Group: true, Path: q.collID}
	}
	return fsstore.Scope{Path: q.collPath()}
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
	if current || q.nearest != nil || (q.allDesc && q.collID == "") || !t.Equal(db.st.ReadTime()) {
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
	ix := db.st.Index(scopeOf(q), fps)
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
	inPrefix := func(it fsstore.IndexItem) bool {
		for i, v := range prefix {
			if Compare(it.Vals[i], v) != 0 {
				return false
			}
		}
		return true
	}
	visit := func(it fsstore.IndexItem) bool {
		if !exact && groupV != nil && Compare(it.Vals[last], groupV) != 0 {
			flush()
		}
		if k >= 0 && len(out) >= k {
			return false
		}
		if !exact {
			groupV = it.Vals[last]
		}
		doc := it.Entry.At(t)
		if q.matches(it.Path, doc) {
			if exact {
				out = append(out, doc)
			} else {
				group = append(group, doc)
			}
		}
		return true
	}
	if first.desc {
		fn := func(it fsstore.IndexItem) bool {
			if !inPrefix(it) || (lower != nil && Compare(it.Vals[last], lower) < 0) {
				return false
			}
			return visit(it)
		}
		ix.Descend(prefix, upper, fn)
	} else {
		fn := func(it fsstore.IndexItem) bool {
			if !inPrefix(it) || (upper != nil && Compare(it.Vals[last], upper) > 0) {
				return false
			}
			return visit(it)
		}
		ix.Ascend(prefix, lower, fn)
	}
	flush()
	if k >= 0 && len(out) > k {
		out = out[:k]
	}
	return out, true
}
