package firestore

import (
	"container/heap"
	"slices"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/firestore/fsstore"
	"github.com/pyric/pyric/firestore/fsvalue"
)

// query is a validated, normalized StructuredQuery.
type query struct {
	db             DatabaseName
	parent         string // relative parent document path, "" for the root
	collID         string
	allDesc        bool
	filter         *filter
	orders         []order // normalized: explicit, implicit inequality fields, __name__
	explicitOrders int
	start, end     *cursor
	limit          int // -1: none
	offset         int
	hasSelect      bool
	sel            []FieldPath
	sq             *pb.StructuredQuery
	inequalities   []FieldPath
	nearest        *nearest
}

type order struct {
	fp   FieldPath
	desc bool
}

type cursor struct {
	values []*pb.Value
	before bool
}

type filterKind int

const (
	fAnd filterKind = iota
	fOr
	fField
	fUnary
)

type filter struct {
	kind  filterKind
	fp    FieldPath
	op    pb.StructuredQuery_FieldFilter_Operator
	uop   pb.StructuredQuery_UnaryFilter_Operator
	value *pb.Value
	subs  []*filter
}

// Operator names as production spells them in messages.
func opName(op pb.StructuredQuery_FieldFilter_Operator) string { return op.String() }

// compileQuery validates sq (under parent, in db) and normalizes it.
func compileQuery(db DatabaseName, parent string, sq *pb.StructuredQuery) (*query, error) {
	if sq == nil {
		return nil, fsvalue.Errorf(ErrInvalidArgument, "A query must be given.")
	}
	q := &query{db: db, parent: parent, sq: sq, limit: -1}
	if len(sq.GetFrom()) != 1 {
		return nil, fsvalue.Errorf(ErrInvalidArgument, "A query must select exactly one collection in from; this one has %d.", len(sq.GetFrom()))
	}
	from := sq.GetFrom()[0]
	q.collID, q.allDesc = from.GetCollectionId(), from.GetAllDescendants()
	// A kindless query (all descendants, no collection id) is how the
	// SDKs' recursiveDelete lists everything under a parent.
	if q.collID != "" || !q.allDesc {
		if err := ValidateCollectionID(q.collID); err != nil {
			return nil, err
		}
	}
	if w := sq.GetWhere(); w != nil {
		f, err := q.compileFilter(w)
		if err != nil {
			return nil, err
		}
		q.filter = f
		if err := q.checkFilters(); err != nil {
			return nil, err
		}
	}
	seen := map[string]bool{}
	for _, o := range sq.GetOrderBy() {
		fp, err := parseRequestPath(o.GetField().GetFieldPath())
		if err != nil {
			return nil, err
		}
		if seen[fp.String()] {
			return nil, fsvalue.Errorf(ErrInvalidArgument, "Order by field %s is specified more than once.", fp)
		}
		seen[fp.String()] = true
		switch o.GetDirection() {
		case pb.StructuredQuery_DIRECTION_UNSPECIFIED, pb.StructuredQuery_ASCENDING, pb.StructuredQuery_DESCENDING:
		default:
			return nil, fsvalue.Errorf(ErrInvalidArgument, "Unrecognized ordering: the order by %s has direction %d; use ASCENDING or DESCENDING.", fp, o.GetDirection())
		}
		q.orders = append(q.orders, order{fp: fp, desc: o.GetDirection() == pb.StructuredQuery_DESCENDING})
	}
	q.explicitOrders = len(q.orders)
	if err := q.checkInequalities(); err != nil {
		return nil, err
	}
	last := false
	if len(q.orders) > 0 {
		last = q.orders[len(q.orders)-1].desc
	}
	// Implicit order: inequality fields not explicitly ordered, in field-path
	// order, then __name__, all in the direction of the last explicit order.
	// The document key is last even when it is one of the inequality
	// fields, although __name__ sorts before lowercase field names (as
	// production and the official emulator order it).
	var implicit []FieldPath
	for _, fp := range q.inequalities {
		if !seen[fp.String()] && !fp.IsName() {
			seen[fp.String()] = true
			implicit = append(implicit, fp)
		}
	}
	slices.SortFunc(implicit, func(a, b FieldPath) int { return compareFieldPaths(a, b) })
	for _, fp := range implicit {
		q.orders = append(q.orders, order{fp: fp, desc: last})
	}
	if !seen[NameField] {
		q.orders = append(q.orders, order{fp: FieldPath{NameField}, desc: last})
	}
	// The key is unique, so nothing may follow it: an explicit order by
	// __name__ before another explicit order, or before an inequality field
	// that is not explicitly ordered, is rejected (the official emulator's
	// words).
	for _, o := range q.orders[:len(q.orders)-1] {
		if o.fp.IsName() {
			return nil, fsvalue.Errorf(ErrInvalidArgument, "order by clause cannot contain more fields after the key")
		}
	}
	for _, c := range []struct {
		in  *pb.Cursor
		out **cursor
	}{{sq.GetStartAt(), &q.start}, {sq.GetEndAt(), &q.end}} {
		if c.in == nil {
			continue
		}
		// A cursor gives values for the explicit orders only; the SDKs send
		// the implicit ones explicitly when they build a cursor from a
		// snapshot (the official emulator rejects one value more).
		if len(c.in.GetValues()) > q.explicitOrders {
			return nil, fsvalue.Errorf(ErrInvalidArgument, "Cursor has too many values.")
		}
		for i, v := range c.in.GetValues() {
			if q.orders[i].fp.IsName() {
				if err := q.checkNameValue(v); err != nil {
					return nil, err
				}
			}
		}
		*c.out = &cursor{values: c.in.GetValues(), before: c.in.GetBefore()}
	}
	if l := sq.GetLimit(); l != nil {
		if l.GetValue() < 0 {
			return nil, fsvalue.Errorf(ErrInvalidArgument, "limit is negative: %d.", l.GetValue())
		}
		q.limit = int(l.GetValue())
	}
	if sq.GetOffset() < 0 {
		return nil, fsvalue.Errorf(ErrInvalidArgument, "offset is negative: %d.", sq.GetOffset())
	}
	q.offset = int(sq.GetOffset())
	if fn := sq.GetFindNearest(); fn != nil {
		n, err := compileNearest(fn)
		if err != nil {
			return nil, err
		}
		q.nearest = n
	}
	if s := sq.GetSelect(); s != nil {
		q.hasSelect = true
		for _, f := range s.GetFields() {
			fp, err := parseRequestPath(f.GetFieldPath())
			if err != nil {
				return nil, err
			}
			q.sel = append(q.sel, fp)
		}
	}
	return q, nil
}

func compareFieldPaths(a, b FieldPath) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := strings.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

func (q *query) checkNameValue(v *pb.Value) error {
	ref, ok := v.GetValueType().(*pb.Value_ReferenceValue)
	if !ok {
		return fsvalue.Errorf(ErrInvalidArgument, "__key__ filter value must be a Key")
	}
	db, rel, err := ParseDocumentName(ref.ReferenceValue)
	if err != nil {
		return err
	}
	if db != q.db {
		return fsvalue.Errorf(ErrInvalidArgument, "__key__ filter value %q is in another database than the query (%s).", ref.ReferenceValue, q.db)
	}
	if !q.allDesc && fsvalue.CollectionOf(rel) != q.collPath() {
		return fsvalue.Errorf(ErrInvalidArgument, "__key__ filter value %q is not a document of the queried collection %q.", ref.ReferenceValue, q.collPath())
	}
	return nil
}

func (q *query) collPath() string {
	switch {
	case q.collID == "":
		return q.parent
	case q.parent == "":
		return q.collID
	}
	return q.parent + "/" + q.collID
}

func (q *query) describe() string {
	if q.allDesc && q.collID == "" {
		if q.parent == "" {
			return "every document"
		}
		return "every document under " + q.parent
	}
	if q.allDesc {
		return "collection group " + q.collID
	}
	return "collection " + q.collPath()
}

var maxValues = map[pb.StructuredQuery_FieldFilter_Operator]int{
	pb.StructuredQuery_FieldFilter_IN:                 30,
	pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS_ANY: 30,
	pb.StructuredQuery_FieldFilter_NOT_IN:             10,
}

func (q *query) compileFilter(w *pb.StructuredQuery_Filter) (*filter, error) {
	switch x := w.GetFilterType().(type) {
	case *pb.StructuredQuery_Filter_CompositeFilter:
		f := &filter{}
		switch x.CompositeFilter.GetOp() {
		case pb.StructuredQuery_CompositeFilter_AND:
			f.kind = fAnd
		case pb.StructuredQuery_CompositeFilter_OR:
			f.kind = fOr
		default:
			return nil, fsvalue.Errorf(ErrInvalidArgument, "A composite filter must have the operator AND or OR.")
		}
		if len(x.CompositeFilter.GetFilters()) == 0 {
			return nil, fsvalue.Errorf(ErrInvalidArgument, "A composite filter must contain at least one filter.")
		}
		for _, s := range x.CompositeFilter.GetFilters() {
			sf, err := q.compileFilter(s)
			if err != nil {
				return nil, err
			}
			f.subs = append(f.subs, sf)
		}
		return f, nil
	case *pb.StructuredQuery_Filter_FieldFilter:
		ff := x.FieldFilter
		fp, err := parseRequestPath(ff.GetField().GetFieldPath())
		if err != nil {
			return nil, err
		}
		f := &filter{kind: fField, fp: fp, op: ff.GetOp(), value: ff.GetValue()}
		if f.value.GetValueType() == nil {
			return nil, fsvalue.Errorf(ErrInvalidArgument, "The filter on %s has no value.", fp)
		}
		switch f.op {
		case pb.StructuredQuery_FieldFilter_LESS_THAN, pb.StructuredQuery_FieldFilter_LESS_THAN_OR_EQUAL,
			pb.StructuredQuery_FieldFilter_GREATER_THAN, pb.StructuredQuery_FieldFilter_GREATER_THAN_OR_EQUAL,
			pb.StructuredQuery_FieldFilter_NOT_EQUAL:
			q.inequalities = appendPath(q.inequalities, fp)
			if fp.IsName() {
				if err := q.checkNameValue(f.value); err != nil {
					return nil, err
				}
			}
		case pb.StructuredQuery_FieldFilter_EQUAL:
			if fp.IsName() {
				if err := q.checkNameValue(f.value); err != nil {
					return nil, err
				}
			}
		case pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS:
			if fp.IsName() {
				return nil, fsvalue.Errorf(ErrInvalidArgument, "'ARRAY_CONTAINS' cannot be used on __name__.")
			}
		case pb.StructuredQuery_FieldFilter_IN, pb.StructuredQuery_FieldFilter_NOT_IN, pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS_ANY:
			arr, ok := f.value.GetValueType().(*pb.Value_ArrayValue)
			if !ok {
				return nil, fsvalue.Errorf(ErrInvalidArgument, "'%s' requires an ArrayValue.", opName(f.op))
			}
			n := len(arr.ArrayValue.GetValues())
			if n == 0 {
				return nil, fsvalue.Errorf(ErrInvalidArgument, "'%s' requires a non-empty ArrayValue.", opName(f.op))
			}
			if n > maxValues[f.op] {
				return nil, fsvalue.Errorf(ErrInvalidArgument, "'%s' supports up to %d comparison values.", opName(f.op), maxValues[f.op])
			}
			if fp.IsName() {
				if f.op == pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS_ANY {
					return nil, fsvalue.Errorf(ErrInvalidArgument, "'ARRAY_CONTAINS_ANY' cannot be used on __name__.")
				}
				for _, v := range arr.ArrayValue.GetValues() {
					if err := q.checkNameValue(v); err != nil {
						return nil, err
					}
				}
			}
			if f.op == pb.StructuredQuery_FieldFilter_NOT_IN {
				q.inequalities = appendPath(q.inequalities, fp)
			}
		default:
			return nil, fsvalue.Errorf(ErrInvalidArgument, "The filter on %s has an unspecified operator.", fp)
		}
		return f, nil
	case *pb.StructuredQuery_Filter_UnaryFilter:
		uf := x.UnaryFilter
		fp, err := parseRequestPath(uf.GetField().GetFieldPath())
		if err != nil {
			return nil, err
		}
		f := &filter{kind: fUnary, fp: fp, uop: uf.GetOp()}
		switch f.uop {
		case pb.StructuredQuery_UnaryFilter_IS_NAN, pb.StructuredQuery_UnaryFilter_IS_NULL:
		case pb.StructuredQuery_UnaryFilter_IS_NOT_NAN, pb.StructuredQuery_UnaryFilter_IS_NOT_NULL:
			q.inequalities = appendPath(q.inequalities, fp)
		default:
			return nil, fsvalue.Errorf(ErrInvalidArgument, "The unary filter on %s has an unspecified operator.", fp)
		}
		return f, nil
	}
	return nil, fsvalue.Errorf(ErrInvalidArgument, "A filter must set one of composite_filter, field_filter or unary_filter.")
}

func appendPath(ps []FieldPath, fp FieldPath) []FieldPath {
	for _, p := range ps {
		if p.Equal(fp) {
			return ps
		}
	}
	return append(ps, fp)
}

// checkInequalities applies production's ordering rules (observed on the
// official emulator): with inequality filters (on one field or several) an equality on
// __name__ is allowed only when __name__ is among the inequality fields.
func (q *query) checkInequalities() error {
	if len(q.inequalities) == 0 {
		return nil
	}
	keyInequality := false
	for _, fp := range q.inequalities {
		if fp.IsName() {
			keyInequality = true
		}
	}
	if keyInequality {
		return nil
	}
	var keyEquality bool
	var walk func(f *filter)
	walk = func(f *filter) {
		switch f.kind {
		case fAnd, fOr:
			for _, s := range f.subs {
				walk(s)
			}
		case fField:
			if f.fp.IsName() && (f.op == pb.StructuredQuery_FieldFilter_EQUAL || f.op == pb.StructuredQuery_FieldFilter_IN) {
				keyEquality = true
			}
		}
	}
	walk(q.filter)
	if keyEquality {
		return fsvalue.Errorf(ErrInvalidArgument, "Equality on key is not allowed if there are other inequality fields and key does not appear in inequalities.")
	}
	return nil
}

// checkFilters applies production's cross-filter limits.
func (q *query) checkFilters() error {
	negations := 0
	notIn, disjunctive := false, false
	var walk func(f *filter)
	walk = func(f *filter) {
		switch f.kind {
		case fAnd, fOr:
			if f.kind == fOr {
				disjunctive = true
			}
			for _, s := range f.subs {
				walk(s)
			}
		case fField:
			if f.op == pb.StructuredQuery_FieldFilter_NOT_EQUAL || f.op == pb.StructuredQuery_FieldFilter_NOT_IN {
				negations++
			}
			switch f.op {
			case pb.StructuredQuery_FieldFilter_NOT_IN:
				notIn = true
			case pb.StructuredQuery_FieldFilter_IN, pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS_ANY:
				disjunctive = true
			}
		case fUnary:
			if f.uop == pb.StructuredQuery_UnaryFilter_IS_NOT_NAN || f.uop == pb.StructuredQuery_UnaryFilter_IS_NOT_NULL {
				negations++
			}
		}
	}
	walk(q.filter)
	if negations > 1 {
		return fsvalue.Errorf(ErrInvalidArgument, "Only a single 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', or 'IS_NOT_NULL' filter allowed per query.")
	}
	// Observed on the official emulator (e2e/goclient differential test).
	if notIn && disjunctive {
		return fsvalue.Errorf(ErrInvalidArgument, "'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'.")
	}
	return nil
}

// fieldValue returns the value a query sees at fp: the document's name as a
// reference for __name__, nil when the field is missing.
func fieldValue(d *pb.Document, fp FieldPath) *pb.Value {
	if fp.IsName() {
		return &pb.Value{ValueType: &pb.Value_ReferenceValue{ReferenceValue: d.Name}}
	}
	return fsvalue.GetField(d.Fields, fp)
}

// eval reports whether d passes the filter.
func (f *filter) eval(d *pb.Document) bool {
	switch f.kind {
	case fAnd:
		for _, s := range f.subs {
			if !s.eval(d) {
				return false
			}
		}
		return true
	case fOr:
		for _, s := range f.subs {
			if s.eval(d) {
				return true
			}
		}
		return false
	case fUnary:
		v := fieldValue(d, f.fp)
		if v == nil {
			return false
		}
		switch f.uop {
		case pb.StructuredQuery_UnaryFilter_IS_NULL:
			return fsvalue.IsNull(v)
		case pb.StructuredQuery_UnaryFilter_IS_NAN:
			return fsvalue.IsNaN(v)
		case pb.StructuredQuery_UnaryFilter_IS_NOT_NULL:
			return !fsvalue.IsNull(v)
		case pb.StructuredQuery_UnaryFilter_IS_NOT_NAN:
			// Observed on the official emulator: null values do not match.
			return !fsvalue.IsNull(v) && !fsvalue.IsNaN(v)
		}
		return false
	}
	v := fieldValue(d, f.fp)
	if v == nil {
		return false // a missing field matches no field filter, not even !=
	}
	switch f.op {
	case pb.StructuredQuery_FieldFilter_EQUAL:
		return Equal(v, f.value)
	case pb.StructuredQuery_FieldFilter_NOT_EQUAL:
		return !fsvalue.IsNull(v) && !fsvalue.SameValue(v, f.value)
	case pb.StructuredQuery_FieldFilter_IN:
		for _, e := range f.value.GetArrayValue().GetValues() {
			if Equal(v, e) {
				return true
			}
		}
		return false
	case pb.StructuredQuery_FieldFilter_NOT_IN:
		if fsvalue.IsNull(v) {
			return false
		}
		for _, e := range f.value.GetArrayValue().GetValues() {
			if fsvalue.IsNull(e) || fsvalue.SameValue(v, e) {
				return false // a null candidate makes not-in match nothing
			}
		}
		return true
	case pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS:
		for _, e := range v.GetArrayValue().GetValues() {
			if Equal(e, f.value) {
				return true
			}
		}
		return false
	case pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS_ANY:
		for _, e := range v.GetArrayValue().GetValues() {
			for _, c := range f.value.GetArrayValue().GetValues() {
				if Equal(e, c) {
					return true
				}
			}
		}
		return false
	}
	// Range operators match only values of the operand's type; NaN and null
	// take part in no range.
	if fsvalue.TypeRank(v) != fsvalue.TypeRank(f.value) || fsvalue.IsNaN(v) || fsvalue.IsNaN(f.value) || fsvalue.IsNull(f.value) {
		return false
	}
	c := Compare(v, f.value)
	switch f.op {
	case pb.StructuredQuery_FieldFilter_LESS_THAN:
		return c < 0
	case pb.StructuredQuery_FieldFilter_LESS_THAN_OR_EQUAL:
		return c <= 0
	case pb.StructuredQuery_FieldFilter_GREATER_THAN:
		return c > 0
	case pb.StructuredQuery_FieldFilter_GREATER_THAN_OR_EQUAL:
		return c >= 0
	}
	return false
}

// inScope reports whether the document path is in the query's collection.
func (q *query) inScope(rel string) bool {
	coll := fsvalue.CollectionOf(rel)
	if !q.allDesc {
		return coll == q.collPath()
	}
	if q.collID != "" && fsvalue.DocID(coll) != q.collID {
		return false
	}
	return q.parent == "" || strings.HasPrefix(rel, q.parent+"/")
}

// onlyScope reports whether every document in the query's scope matches
// it: no filter, no cursor, no order but by name (which every document
// has).
func (q *query) onlyScope() bool {
	if q.filter != nil || q.start != nil || q.end != nil {
		return false
	}
	for _, o := range q.orders {
		if !o.fp.IsName() {
			return false
		}
	}
	return true
}

// matches reports whether d belongs to the query's result, ignoring offset
// and limit: scope, filters, presence of every ordered field, cursors.
func (q *query) matches(rel string, d *pb.Document) bool {
	if d == nil || !q.inScope(rel) {
		return false
	}
	for _, o := range q.orders {
		if !o.fp.IsName() && fsvalue.GetField(d.Fields, o.fp) == nil {
			return false
		}
	}
	if q.filter != nil && !q.filter.eval(d) {
		return false
	}
	if q.start != nil {
		c := q.cmpCursor(d, q.start)
		if c < 0 || (c == 0 && !q.start.before) {
			return false
		}
	}
	if q.end != nil {
		c := q.cmpCursor(d, q.end)
		if c > 0 || (c == 0 && q.end.before) {
			return false
		}
	}
	return true
}

func (q *query) cmpCursor(d *pb.Document, c *cursor) int {
	for i, v := range c.values {
		o := q.orders[i]
		r := Compare(fieldValue(d, o.fp), v)
		if o.desc {
			r = -r
		}
		if r != 0 {
			return r
		}
	}
	return 0
}

// cmpDocs orders two matching documents by the normalized order.
func (q *query) cmpDocs(a, b *pb.Document) int {
	for _, o := range q.orders {
		var r int
		if o.fp.IsName() {
			r = fsvalue.CompareNames(a.Name, b.Name)
		} else {
			r = Compare(fsvalue.GetField(a.Fields, o.fp), fsvalue.GetField(b.Fields, o.fp))
		}
		if o.desc {
			r = -r
		}
		if r != 0 {
			return r
		}
	}
	return 0
}

// candidates returns the entries a query may match, in one or more maps;
// callers hold db.st's lock.
func (db *database) candidates(q *query) []map[string]*fsstore.Entry {
	if q.allDesc && q.collID == "" {
		return []map[string]*fsstore.Entry{db.st.All()}
	}
	if q.allDesc {
		return db.st.Group(q.collID)
	}
	return []map[string]*fsstore.Entry{db.st.Collection(q.collPath())}
}

// runQuery returns the ordered result at time t (current state when
// current), after offset and limit; callers hold db.st's lock.
func (db *database) runQuery(q *query, t time.Time, current bool) []*pb.Document {
	if q.nearest != nil {
		lim := q.limit
		q.limit = -1
		all := db.matching(q, t, current)
		q.limit = lim
		return q.window(q.nearest.apply(all))
	}
	all := db.matching(q, t, current)
	return q.window(all)
}

// matching returns the matching documents in order, before offset/limit;
// with a limit only the first offset+limit are kept (a bounded heap instead
// of a full sort). Sort keys are extracted once per document.
func (db *database) matching(q *query, t time.Time, current bool) []*pb.Document {
	if out, ok := db.indexedMatching(q, t, current); ok {
		return out
	}
	return db.scan(q, t, current)
}

// scan is matching over every document of the query's scope; callers
// hold db.st's lock.
func (db *database) scan(q *query, t time.Time, current bool) []*pb.Document {
	return scanEntries(q, t, current, db.snapshot(q))
}

// snapshot lists the entries a query may match, so that the scan itself
// can run after the lock is released; callers hold db.st's lock.
func (db *database) snapshot(q *query) []*fsstore.Entry {
	ms := db.candidates(q)
	n := 0
	for _, m := range ms {
		n += len(m)
	}
	out := make([]*fsstore.Entry, 0, n)
	for _, m := range ms {
		for _, d := range m {
			out = append(out, d)
		}
	}
	return out
}

// scanEntries is matching over the entries: it needs no lock, since
// entries publish their versions atomically and never change them.
func scanEntries(q *query, t time.Time, current bool, entries []*fsstore.Entry) []*pb.Document {
	k := -1
	if q.limit >= 0 {
		k = q.offset + q.limit
	}
	h := &keyHeap{q: q}
	for _, d := range entries {
		rel := d.Path()
		var doc *pb.Document
		if current {
			doc = d.Current()
		} else {
			doc = d.At(t)
		}
		if !q.matches(rel, doc) {
			continue
		}
		x := keyed{d: doc, keys: make([]*pb.Value, len(q.orders))}
		for i, o := range q.orders {
			if !o.fp.IsName() {
				x.keys[i] = fsvalue.GetField(doc.Fields, o.fp)
			}
		}
		switch {
		case k < 0 || len(h.xs) < k:
			heap.Push(h, x)
		case k > 0 && q.cmpKeyed(x, h.xs[0]) < 0:
			h.xs[0] = x
			heap.Fix(h, 0)
		}
	}
	slices.SortFunc(h.xs, q.cmpKeyed)
	out := make([]*pb.Document, len(h.xs))
	for i, x := range h.xs {
		out[i] = x.d
	}
	return out
}

// countEntries is the number of entries whose document at t matches the
// query, before offset and limit; like scanEntries it needs no lock. It
// keeps none of the documents.
func countEntries(q *query, t time.Time, entries []*fsstore.Entry) int {
	n := 0
	if q.onlyScope() {
		// Every document in scope matches: count them without decoding.
		for _, d := range entries {
			if q.inScope(d.Path()) && d.ExistsAt(t) {
				n++
			}
		}
		return n
	}
	for _, d := range entries {
		if q.matches(d.Path(), d.At(t)) {
			n++
		}
	}
	return n
}

type keyed struct {
	d    *pb.Document
	keys []*pb.Value
}

func (q *query) cmpKeyed(a, b keyed) int {
	for i, o := range q.orders {
		var r int
		if o.fp.IsName() {
			r = fsvalue.CompareNames(a.d.Name, b.d.Name)
		} else {
			r = Compare(a.keys[i], b.keys[i])
		}
		if o.desc {
			r = -r
		}
		if r != 0 {
			return r
		}
	}
	return 0
}

// keyHeap is a max-heap in query order: its root is the last document kept.
type keyHeap struct {
	q  *query
	xs []keyed
}

func (h *keyHeap) Len() int           { return len(h.xs) }
func (h *keyHeap) Less(i, j int) bool { return h.q.cmpKeyed(h.xs[i], h.xs[j]) > 0 }
func (h *keyHeap) Swap(i, j int)      { h.xs[i], h.xs[j] = h.xs[j], h.xs[i] }
func (h *keyHeap) Push(x any)         { h.xs = append(h.xs, x.(keyed)) }
func (h *keyHeap) Pop() any {
	x := h.xs[len(h.xs)-1]
	h.xs = h.xs[:len(h.xs)-1]
	return x
}

// window applies offset and limit to an ordered result.
func (q *query) window(all []*pb.Document) []*pb.Document {
	if q.offset >= len(all) {
		return nil
	}
	all = all[q.offset:]
	if q.limit >= 0 && q.limit < len(all) {
		all = all[:q.limit]
	}
	return all
}

// windowLen is the length of window's result for n matching documents.
func (q *query) windowLen(n int) int {
	n = max(n-q.offset, 0)
	if q.limit >= 0 {
		n = min(n, q.limit)
	}
	return n
}

// projectQuery applies the query's select clause.
func (q *query) project(d *pb.Document) *pb.Document {
	if !q.hasSelect {
		return d
	}
	out := &pb.Document{Name: d.Name, CreateTime: d.CreateTime, UpdateTime: d.UpdateTime, Fields: map[string]*pb.Value{}}
	for _, fp := range q.sel {
		if fp.IsName() {
			continue
		}
		if v := fsvalue.GetField(d.Fields, fp); v != nil {
			fsvalue.SetField(out.Fields, fp, v)
		}
	}
	return out
}

// project applies a DocumentMask.
func project(d *pb.Document, mask *pb.DocumentMask) (*pb.Document, error) {
	if mask == nil {
		return d, nil
	}
	out := &pb.Document{Name: d.Name, CreateTime: d.CreateTime, UpdateTime: d.UpdateTime, Fields: map[string]*pb.Value{}}
	for _, s := range mask.GetFieldPaths() {
		fp, err := parseRequestPath(s)
		if err != nil {
			return nil, err
		}
		if v := fsvalue.GetField(d.Fields, fp); v != nil {
			fsvalue.SetField(out.Fields, fp, v)
		}
	}
	return out, nil
}

// info describes the query for the rules gate.
func (q *query) info() *QueryInfo {
	qi := &QueryInfo{Parent: q.parent, CollectionID: q.collID, AllDescendants: q.allDesc,
		Where: q.sq.GetWhere(), OrderBy: q.sq.GetOrderBy(), Offset: q.sq.GetOffset(), Structured: q.sq}
	if l := q.sq.GetLimit(); l != nil {
		v := l.GetValue()
		qi.Limit = &v
	}
	return qi
}
