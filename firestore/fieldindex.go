package firestore

import (
	"slices"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/firestore/fsstore"
	"github.com/pyric/pyric/firestore/fsvalue"
)

// Query planning over the storage layer's field indexes (fsstore.Index):
// a query that is a conjunction of filters with an order is answered by
// walking an index whose leading fields its equality (and array-contains)
// filters fix, followed by its first order field, when the read is at the
// visible time: a declared one, or one built on demand from its equality
// fields; everything else scans.

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

// indexPlan is how a query walks an index: the values fixing its leading
// fields (prefix), then the walked field's bounds (none when the query
// orders by name first and every index field is fixed).
type indexPlan struct {
	ix           *fsstore.Index
	prefix       []*pb.Value
	lower, upper *pb.Value
	// covered: the prefix is the whole query but for its scope (covers),
	// so a document the walk finds within it needs no other check.
	covered bool
}

// covers reports whether every document an index walk finds within the
// prefix p fixes matches q but for its scope: q has no cursor, orders by
// nothing but the name and the walked field (which the index holds), and
// its filters are equalities, each the one that fixed an index field, on
// a value neither null nor NaN (equal exactly when it compares equal, as
// the walk's values do).
func (p indexPlan) covers(q *query, conj []*filter) bool {
	if q.start != nil || q.end != nil {
		return false
	}
	fields := p.ix.Fields()
	walked := !q.orders[0].fp.IsName()
	for i, o := range q.orders {
		if !o.fp.IsName() && (i > 0 || !walked) {
			return false
		}
	}
	for _, f := range conj {
		if f.kind != fField || f.op != pb.StructuredQuery_FieldFilter_EQUAL || fsvalue.IsNull(f.value) || fsvalue.IsNaN(f.value) {
			return false
		}
		fixed := false
		for i, v := range p.prefix {
			if v == f.value && !fields[i].Contains && fields[i].Path.Equal(f.fp) {
				fixed = true
				break
			}
		}
		if !fixed {
			return false
		}
	}
	return true
}

// planIndex chooses the index a query walks: of the maintained indexes
// (declared or built on demand) over its scope, one whose leading fields
// its equality and array-contains filters fix, followed by its first
// order field (unless that is the name), fixing the most fields; when none
// fixes as many as the on-demand index of its equality fields would,
// that one is built. ok is false when the query must scan.
func (db *database) planIndex(q *query) (indexPlan, bool) {
	var p indexPlan
	if q.nearest != nil || (q.allDesc && q.collID == "") {
		return p, false
	}
	conj, ok := conjuncts(q.filter)
	if !ok {
		return p, false
	}
	first := q.orders[0]
	eq := map[string]*filter{}
	contains := map[string]*filter{}
	var eqFields []FieldPath
	for _, f := range conj {
		if f.kind != fField || f.fp.IsName() {
			continue
		}
		switch f.op {
		case pb.StructuredQuery_FieldFilter_EQUAL:
			if _, dup := eq[f.fp.String()]; !dup && !f.fp.Equal(first.fp) {
				eq[f.fp.String()] = f
				eqFields = append(eqFields, f.fp)
			}
		case pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS:
			if _, dup := contains[f.fp.String()]; !dup {
				contains[f.fp.String()] = f
			}
		}
	}
	sc := scopeOf(q)
	walked := !first.fp.IsName()
	// fixes returns the index's prefix values, or ok false when the
	// query cannot walk it.
	fixes := func(ix *fsstore.Index) ([]*pb.Value, bool) {
		fields := ix.Fields()
		if walked {
			last := len(fields) - 1
			if fields[last].Contains || !fields[last].Path.Equal(first.fp) {
				return nil, false
			}
			fields = fields[:last]
		} else if len(fields) == 0 {
			return nil, false
		}
		prefix := make([]*pb.Value, len(fields))
		for i, f := range fields {
			by := eq
			if f.Contains {
				by = contains
			}
			ff, ok := by[f.Path.String()]
			if !ok {
				return nil, false
			}
			prefix[i] = ff.value
		}
		return prefix, true
	}
	best := -1
	for _, ix := range db.st.Indexes(sc) {
		if prefix, ok := fixes(ix); ok && len(prefix) > best {
			p.ix, p.prefix, best = ix, prefix, len(prefix)
		}
	}
	slices.SortFunc(eqFields, compareFieldPaths)
	if len(eqFields) > 3 {
		eqFields = eqFields[:3] // the rest are checked on each document
	}
	if best < len(eqFields) && (walked || len(eqFields) > 0) {
		fps := slices.Clone(eqFields)
		if walked {
			fps = append(fps, first.fp)
		}
		if ix := db.st.Index(sc, fps); ix != nil {
			p.ix = ix
			p.prefix, _ = fixes(ix) // it fixes exactly eqFields
		}
	}
	if p.ix == nil {
		return p, false
	}
	p.covered = p.covers(q, conj)
	if walked {
		for _, f := range conj {
			if f.kind != fField || !f.fp.Equal(first.fp) {
				continue
			}
			switch f.op {
			case pb.StructuredQuery_FieldFilter_EQUAL:
				p.lower, p.upper = f.value, f.value
			case pb.StructuredQuery_FieldFilter_GREATER_THAN, pb.StructuredQuery_FieldFilter_GREATER_THAN_OR_EQUAL:
				if p.lower == nil || Compare(f.value, p.lower) > 0 {
					p.lower = f.value
				}
			case pb.StructuredQuery_FieldFilter_LESS_THAN, pb.StructuredQuery_FieldFilter_LESS_THAN_OR_EQUAL:
				if p.upper == nil || Compare(f.value, p.upper) < 0 {
					p.upper = f.value
				}
			}
		}
	}
	return p, true
}

// indexedMatching answers matching from an index when one serves the
// query (planIndex): ok is false when the query must scan. The walk stays
// within the prefix values and the walked field's bounds, checks every
// document against the whole query and stops at the limit.
func (db *database) indexedMatching(q *query, t time.Time, current bool) ([]*pb.Document, bool) {
	if current || !t.Equal(db.st.ReadTime()) {
		return nil, false
	}
	p, ok := db.planIndex(q)
	if !ok {
		return nil, false
	}
	first := q.orders[0]
	ix, prefix, lower, upper := p.ix, p.prefix, p.lower, p.upper
	k := -1
	if q.limit >= 0 {
		k = q.offset + q.limit
	}
	// The walk's order is (values, name) in the walk's direction; when the
	// query orders ties on the first field differently, each run of equal
	// values is sorted by the full order before it is kept.
	exact := first.fp.IsName() || (len(q.orders) == 2 && q.orders[1].fp.IsName() && q.orders[1].desc == first.desc)
	last := len(ix.Fields()) - 1
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
		if p.covered && doc != nil && q.inScope(it.Path) || !p.covered && q.matches(it.Path, doc) {
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
