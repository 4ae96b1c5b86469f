package database

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/pyric/pyric/rules/rtdb"
)

// Names the SDKs use as the smallest and largest possible keys in query
// bounds (startAfter(v) without a key is (v, MAX_NAME), exclusive).
const (
	MinName = "[MIN_NAME]"
	MaxName = "[MAX_NAME]"
)

// Index names what a query orders by.
const (
	IndexPriority = ""
	IndexKey      = ".key"
	IndexValue    = ".value"
)

// Bound is one end of a query window: the sort value, the key that breaks
// ties among equal values, and whether the bound itself is included.
type Bound struct {
	Value     any
	Key       string // "" means none: MIN_NAME or MAX_NAME per the bound's side
	HasKey    bool
	Inclusive bool
}

// Query is a window over a location's children: ordered by Index, from
// Start to End, the first (or last, FromLast) Limit of them.
type Query struct {
	Index    string // IndexPriority, IndexKey, IndexValue, or a child path "a/b"
	Start    *Bound
	End      *Bound
	Limit    int // 0: no limit
	FromLast bool
	// Raw is the client's query object when it came from the wire, echoed
	// back as it was sent when the listen is revoked.
	Raw map[string]any
	// Ordered marks a REST read with orderBy: a query even without bounds
	// or a limit (orderBy="$priority" alone is still query.orderByPriority).
	Ordered bool
}

// rulesQuery is q as .read rules see it (`query`), or nil for the plain
// read of a whole location. The wire has no equalTo: the SDKs send it as
// equal inclusive start and end bounds, so such bounds read as equalTo
// (and as startAt and endAt); startAfter and endBefore read as startAt and
// endAt of their values.
func (q Query) rulesQuery() *rtdb.Query {
	if q.IsDefault() && q.Index == IndexPriority && !q.Ordered && len(q.Raw) == 0 {
		return nil
	}
	rq := &rtdb.Query{}
	switch q.Index {
	case IndexKey:
		rq.OrderByKey = true
	case IndexValue:
		rq.OrderByValue = true
	case IndexPriority:
		rq.OrderByPriority = true
	default:
		rq.OrderByChild = q.Index
	}
	if q.Start != nil {
		rq.StartAt = q.Start.Value
	}
	if q.End != nil {
		rq.EndAt = q.End.Value
	}
	if s, e := q.Start, q.End; s != nil && e != nil && s.Inclusive && e.Inclusive &&
		typeRank(s.Value) == typeRank(e.Value) && CompareValues(s.Value, e.Value) == 0 &&
		s.HasKey == e.HasKey && s.Key == e.Key {
		rq.EqualTo = s.Value
	}
	if q.Limit > 0 {
		if q.FromLast {
			rq.LimitToLast = q.Limit
		} else {
			rq.LimitToFirst = q.Limit
		}
	}
	return rq
}

// IsDefault reports whether q is the unfiltered default view (the whole
// location).
func (q Query) IsDefault() bool {
	return q.Start == nil && q.End == nil && q.Limit == 0
}

// Canonical is a stable text of the query, identifying a listen.
func (q Query) Canonical() string {
	if q.IsDefault() && q.Index == IndexPriority {
		return "{}"
	}
	b, _ := json.Marshal(q.wireObject())
	return string(b)
}

// WireObject is the websocket query object ({sp, sn, sin, ep, en, ein, l,
// vf, i}) that describes q.
func (q Query) WireObject() map[string]any {
	if q.Raw != nil {
		return q.Raw
	}
	return q.wireObject()
}

func (q Query) wireObject() map[string]any {
	o := map[string]any{}
	if q.Start != nil {
		o["sp"] = q.Start.Value
		if q.Start.HasKey {
			o["sn"] = q.Start.Key
		}
		o["sin"] = q.Start.Inclusive
	}
	if q.End != nil {
		o["ep"] = q.End.Value
		if q.End.HasKey {
			o["en"] = q.End.Key
		}
		o["ein"] = q.End.Inclusive
	}
	if q.Limit > 0 {
		o["l"] = q.Limit
		if q.FromLast {
			o["vf"] = "r"
		} else {
			o["vf"] = "l"
		}
	}
	if q.Index != IndexPriority {
		o["i"] = q.Index
	}
	return o
}

// ParseWireQuery decodes the websocket listen query object.
func ParseWireQuery(o map[string]any) (Query, error) {
	var q Query
	if o == nil {
		return q, nil
	}
	if i, ok := o["i"]; ok {
		s, ok := i.(string)
		if !ok {
			return q, errorf(ErrInvalidQuery, "query index must be a string")
		}
		if s != IndexKey && s != IndexValue && s != ".priority" {
			if _, err := ParsePath(s); err != nil || strings.Trim(s, "/") == "" {
				return q, errorf(ErrInvalidQuery, "invalid query index %q", s)
			}
			s = strings.Trim(s, "/")
		}
		if s == ".priority" {
			s = IndexPriority
		}
		q.Index = s
	}
	bound := func(vk, nk, ik string, defIncl bool) (*Bound, error) {
		v, ok := o[vk]
		if !ok {
			return nil, nil
		}
		nv, err := Normalize(v, nil, 0)
		if err != nil {
			return nil, errorf(ErrInvalidQuery, "query bound %s: %v", vk, err)
		}
		if _, isMap := nv.(map[string]any); isMap {
			return nil, errorf(ErrInvalidQuery, "query bound %s must be a primitive", vk)
		}
		b := &Bound{Value: nv, Inclusive: defIncl}
		if n, ok := o[nk]; ok {
			s, ok := n.(string)
			if !ok {
				return nil, errorf(ErrInvalidQuery, "query bound key %s must be a string", nk)
			}
			b.Key, b.HasKey = s, true
		}
		if in, ok := o[ik]; ok {
			bv, ok := in.(bool)
			if !ok {
				return nil, errorf(ErrInvalidQuery, "%s must be a boolean", ik)
			}
			b.Inclusive = bv
		}
		return b, nil
	}
	var err error
	if q.Start, err = bound("sp", "sn", "sin", true); err != nil {
		return q, err
	}
	if q.End, err = bound("ep", "en", "ein", true); err != nil {
		return q, err
	}
	if l, ok := o["l"]; ok {
		n, err := Normalize(l, nil, 0)
		f, isNum := n.(float64)
		if err != nil || !isNum || f < 1 || f != float64(int(f)) || f > 1<<31 {
			return q, errorf(ErrInvalidQuery, "query limit must be a positive integer")
		}
		q.Limit = int(f)
		if vf, ok := o["vf"]; ok && vf == "r" {
			q.FromLast = true
		}
	}
	q.Raw = o
	return q, q.check()
}

func (q Query) check() error {
	for _, b := range []*Bound{q.Start, q.End} {
		if b == nil {
			continue
		}
		switch q.Index {
		case IndexKey:
			if _, ok := b.Value.(string); !ok {
				return errorf(ErrInvalidQuery, "orderByKey bounds must be strings")
			}
		case IndexPriority:
			switch b.Value.(type) {
			case nil, float64, string:
			default:
				return errorf(ErrInvalidQuery, "orderByPriority bounds must be numbers, strings or null")
			}
		}
	}
	return nil
}

// ParseRESTQuery reads the query parameters of a REST request (orderBy,
// startAt, startAfter, endAt, endBefore, equalTo, limitToFirst,
// limitToLast), whose values are JSON. ok is false when there is no query.
func ParseRESTQuery(v url.Values) (q Query, ok bool, err error) {
	params := []string{"startAt", "startAfter", "endAt", "endBefore", "equalTo", "limitToFirst", "limitToLast"}
	has := false
	for _, p := range params {
		if _, ok := v[p]; ok {
			has = true
		}
	}
	ob, hasOrder := v["orderBy"]
	if !hasOrder {
		if has {
			return q, false, errorf(ErrInvalidQuery, "orderBy must be defined when other query parameters are defined")
		}
		return q, false, nil
	}
	var order string
	if err := json.Unmarshal([]byte(ob[0]), &order); err != nil {
		return q, false, errorf(ErrInvalidQuery, "orderBy must be a valid JSON encoded path")
	}
	q.Ordered = true
	switch order {
	case "$key":
		q.Index = IndexKey
	case "$value":
		q.Index = IndexValue
	case "$priority":
		q.Index = IndexPriority
	default:
		keys, perr := ParsePath(order)
		if perr != nil || len(keys) == 0 {
			return q, false, errorf(ErrInvalidQuery, "orderBy must be a valid JSON encoded path")
		}
		q.Index = strings.Join(keys, "/")
	}
	val := func(name string) (any, bool, error) {
		s, ok := v[name]
		if !ok {
			return nil, false, nil
		}
		d := json.NewDecoder(strings.NewReader(s[0]))
		d.UseNumber()
		var x any
		if err := d.Decode(&x); err != nil || d.More() {
			return nil, false, errorf(ErrInvalidQuery, "%s must be a valid JSON value", name)
		}
		nx, err := Normalize(x, nil, 0)
		if err != nil {
			return nil, false, errorf(ErrInvalidQuery, "%s: %v", name, err)
		}
		if _, isMap := nx.(map[string]any); isMap {
			return nil, false, errorf(ErrInvalidQuery, "%s must be a primitive JSON value", name)
		}
		if q.Index == IndexKey {
			if _, isStr := nx.(string); !isStr {
				return nil, false, errorf(ErrInvalidQuery, "%s must be a string when orderBy is \"$key\"", name)
			}
		}
		return nx, true, nil
	}
	set := func(dst **Bound, name string, incl bool) error {
		x, ok, err := val(name)
		if err != nil || !ok {
			return err
		}
		if *dst != nil {
			return errorf(ErrInvalidQuery, "%s conflicts with another bound on the same side", name)
		}
		*dst = &Bound{Value: x, Inclusive: incl}
		return nil
	}
	for _, s := range []struct {
		name  string
		start bool
		incl  bool
	}{{"startAt", true, true}, {"startAfter", true, false}, {"endAt", false, true}, {"endBefore", false, false}, {"equalTo", true, true}} {
		dst := &q.End
		if s.start {
			dst = &q.Start
		}
		if err := set(dst, s.name, s.incl); err != nil {
			return q, false, err
		}
		if s.name == "equalTo" && q.Start != nil {
			if _, ok := v["equalTo"]; ok {
				if q.End != nil {
					return q, false, errorf(ErrInvalidQuery, "equalTo conflicts with endAt or endBefore")
				}
				e := *q.Start
				q.End = &e
			}
		}
	}
	lim := func(name string) (int, bool, error) {
		s, ok := v[name]
		if !ok {
			return 0, false, nil
		}
		n, err := strconv.Atoi(s[0])
		if err != nil || n < 1 {
			return 0, false, errorf(ErrInvalidQuery, "%s must be a positive integer", name)
		}
		return n, true, nil
	}
	first, hasFirst, err := lim("limitToFirst")
	if err != nil {
		return q, false, err
	}
	last, hasLast, err := lim("limitToLast")
	if err != nil {
		return q, false, err
	}
	if hasFirst && hasLast {
		return q, false, errorf(ErrInvalidQuery, "limitToFirst and limitToLast can't both be set")
	}
	if hasFirst {
		q.Limit = first
	}
	if hasLast {
		q.Limit, q.FromLast = last, true
	}
	return q, true, q.check()
}

// entry is one child in index order.
type entry struct {
	key string
	val any // the sort value
}

type objectSort struct{}

// sortValue is the value a child sorts by under index.
func sortValue(index string, ikeys []string, key string, child any) any {
	switch index {
	case IndexKey:
		return key
	case IndexPriority:
		return priorityOf(child)
	case IndexValue:
	default:
		child = getAt(child, ikeys)
	}
	if _, node := isNode(child); node {
		return objectSort{}
	}
	return leafOf(child)
}

func compareKeyNames(a, b string) int {
	if a == b {
		return 0
	}
	if a == MinName || b == MaxName {
		return -1
	}
	if b == MinName || a == MaxName {
		return 1
	}
	return CompareKeys(a, b)
}

func (ix *index) compare(av any, ak string, bv any, bk string) int {
	var c int
	switch ix.spec {
	case IndexKey:
		return compareKeyNames(av.(string), bv.(string))
	case IndexPriority:
		c = comparePriorities(av, bv)
	default:
		c = CompareValues(av, bv)
	}
	if c != 0 {
		return c
	}
	return compareKeyNames(ak, bk)
}

// index is the children of one node sorted by one index. It is built
// lazily for the first query and kept up to date by commits.
type index struct {
	spec    string
	ikeys   []string
	src     uintptr // the node map it reflects (mutated in place, so the same map while the node exists)
	entries []entry
	// sortOf is each child's sort value as indexed: the child itself
	// changes in place, so its old position is found from here.
	sortOf map[string]any
}

func mapID(m map[string]any) uintptr {
	if m == nil {
		return 0
	}
	return uintptr(reflect.ValueOf(m).UnsafePointer())
}

func buildIndex(spec string, m map[string]any) *index {
	ix := &index{spec: spec, src: mapID(m)}
	if spec != IndexKey && spec != IndexPriority && spec != IndexValue {
		ix.ikeys = strings.Split(spec, "/")
	}
	ix.entries = make([]entry, 0, len(m))
	ix.sortOf = make(map[string]any, len(m))
	for k, c := range m {
		if k == ".priority" {
			continue
		}
		sv := sortValue(spec, ix.ikeys, k, c)
		ix.entries = append(ix.entries, entry{k, sv})
		ix.sortOf[k] = sv
	}
	sort.Slice(ix.entries, func(i, j int) bool {
		a, b := ix.entries[i], ix.entries[j]
		return ix.compare(a.val, a.key, b.val, b.key) < 0
	})
	return ix
}

// search returns the position of the first entry not before (v, k).
func (ix *index) search(v any, k string) int {
	return sort.Search(len(ix.entries), func(i int) bool {
		e := ix.entries[i]
		return ix.compare(e.val, e.key, v, k) >= 0
	})
}

// update moves key from its old sort position to the one of newChild
// (absent when newChild is nil).
func (ix *index) update(key string, newChild any) {
	if ov, ok := ix.sortOf[key]; ok {
		i := ix.search(ov, key)
		if i < len(ix.entries) && ix.entries[i].key == key {
			ix.entries = append(ix.entries[:i], ix.entries[i+1:]...)
		}
		delete(ix.sortOf, key)
	}
	if newChild != nil {
		nv := sortValue(ix.spec, ix.ikeys, key, newChild)
		i := ix.search(nv, key)
		ix.entries = append(ix.entries, entry{})
		copy(ix.entries[i+1:], ix.entries[i:])
		ix.entries[i] = entry{key, nv}
		ix.sortOf[key] = nv
	}
}

// window returns the keys of the query's window, in index order.
func (ix *index) window(q Query) []string {
	lo, hi := 0, len(ix.entries)
	if b := q.Start; b != nil {
		k := b.Key
		if !b.HasKey {
			k = MinName
			if !b.Inclusive {
				k = MaxName
			}
		}
		v := b.Value
		if ix.spec == IndexKey {
			k = ""
		}
		lo = ix.searchBound(v, k, b.Inclusive)
	}
	if b := q.End; b != nil {
		k := b.Key
		if !b.HasKey {
			k = MaxName
			if !b.Inclusive {
				k = MinName
			}
		}
		if ix.spec == IndexKey {
			k = ""
		}
		// hi is the first entry after the bound.
		hi = ix.searchAfter(b.Value, k, b.Inclusive)
	}
	if hi < lo {
		hi = lo
	}
	if q.Limit > 0 && hi-lo > q.Limit {
		if q.FromLast {
			lo = hi - q.Limit
		} else {
			hi = lo + q.Limit
		}
	}
	keys := make([]string, 0, hi-lo)
	for _, e := range ix.entries[lo:hi] {
		keys = append(keys, e.key)
	}
	return keys
}

func (ix *index) cmpBound(e entry, v any, k string) int {
	if ix.spec == IndexKey {
		return compareKeyNames(e.key, v.(string))
	}
	return ix.compare(e.val, e.key, v, k)
}

func (ix *index) searchBound(v any, k string, incl bool) int {
	return sort.Search(len(ix.entries), func(i int) bool {
		c := ix.cmpBound(ix.entries[i], v, k)
		if incl {
			return c >= 0
		}
		return c > 0
	})
}

func (ix *index) searchAfter(v any, k string, incl bool) int {
	return sort.Search(len(ix.entries), func(i int) bool {
		c := ix.cmpBound(ix.entries[i], v, k)
		if incl {
			return c > 0
		}
		return c >= 0
	})
}

// orderKeys returns all keys of m in the query's order (for the initial
// child events of an SDK, which reorder anyway; and for tests).
func orderKeys(spec string, m map[string]any) []string {
	return buildIndex(spec, m).window(Query{Index: spec})
}

func (q Query) String() string {
	return fmt.Sprintf("query%s", q.Canonical())
}
