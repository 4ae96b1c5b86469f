package firestore

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/firestore/fsstore"
	"github.com/pyric/pyric/firestore/fsvalue"
)

// IndexConfig is the content of firestore.indexes.json. When set on an
// engine with SetIndexes, queries that production could not serve from its
// automatic single-field indexes must match a declared index, or fail with
// FAILED_PRECONDITION naming the index to add. Without it (the default, as
// on the emulator) every query runs.
type IndexConfig struct {
	Indexes        []IndexDef      `json:"indexes"`
	FieldOverrides []FieldOverride `json:"fieldOverrides,omitempty"`
}

// IndexDef is one composite index.
type IndexDef struct {
	CollectionGroup string       `json:"collectionGroup"`
	QueryScope      string       `json:"queryScope"` // COLLECTION | COLLECTION_GROUP
	Fields          []IndexField `json:"fields"`
}

// IndexField is one field of an index: Order ASCENDING|DESCENDING or
// ArrayConfig CONTAINS.
type IndexField struct {
	FieldPath   string `json:"fieldPath"`
	Order       string `json:"order,omitempty"`
	ArrayConfig string `json:"arrayConfig,omitempty"`
}

// FieldOverride configures single-field indexes of one field.
type FieldOverride struct {
	CollectionGroup string          `json:"collectionGroup"`
	FieldPath       string          `json:"fieldPath"`
	Indexes         []OverrideIndex `json:"indexes"`
}

// OverrideIndex is one single-field index of an override.
type OverrideIndex struct {
	Order       string `json:"order,omitempty"`
	ArrayConfig string `json:"arrayConfig,omitempty"`
	QueryScope  string `json:"queryScope,omitempty"`
}

// ParseIndexConfig parses firestore.indexes.json; errors name that file.
func ParseIndexConfig(data []byte) (*IndexConfig, error) {
	return ParseIndexFile("firestore.indexes.json", data)
}

// ParseIndexFile parses an index file in the Firebase CLI's format,
// checking what the CLI's deploy would reject: every error names the
// file, and the index or override and field that is wrong.
func ParseIndexFile(name string, data []byte) (*IndexConfig, error) {
	var c IndexConfig
	if err := json.Unmarshal(data, &c); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := lineCol(data, se.Offset)
			return nil, fsvalue.Errorf(ErrInvalidArgument, "%s:%d:%d: %v", name, line, col, err)
		}
		return nil, fsvalue.Errorf(ErrInvalidArgument, "%s: %v", name, err)
	}
	bad := func(format string, args ...any) error {
		return fsvalue.Errorf(ErrInvalidArgument, "%s: %s", name, fmt.Sprintf(format, args...))
	}
	for i, ix := range c.Indexes {
		at := fmt.Sprintf("indexes[%d]", i)
		switch {
		case ix.CollectionGroup == "":
			return nil, bad("%s: missing \"collectionGroup\"", at)
		case len(ix.Fields) == 0:
			return nil, bad("%s (collectionGroup %q): \"fields\" is empty; an index needs at least one field", at, ix.CollectionGroup)
		}
		if err := checkScope(ix.QueryScope); err != nil {
			return nil, bad("%s: %v", at, err)
		}
		contains := 0
		for j, f := range ix.Fields {
			fat := fmt.Sprintf("%s.fields[%d]", at, j)
			fp, err := ParseFieldPath(f.FieldPath)
			if err != nil {
				return nil, bad("%s: fieldPath %q: %v", fat, f.FieldPath, err)
			}
			if fp.IsName() && j != len(ix.Fields)-1 {
				return nil, bad("%s: %s can only be the last field of an index", fat, NameField)
			}
			if err := checkIndexMode(f.Order, f.ArrayConfig); err != nil {
				return nil, bad("%s (%s): %v", fat, f.FieldPath, err)
			}
			if f.ArrayConfig != "" {
				if contains++; contains > 1 {
					return nil, bad("%s (%s): an index can have only one arrayConfig field", fat, f.FieldPath)
				}
			}
		}
	}
	for i, fo := range c.FieldOverrides {
		at := fmt.Sprintf("fieldOverrides[%d]", i)
		if fo.CollectionGroup == "" {
			return nil, bad("%s: missing \"collectionGroup\"", at)
		}
		if _, err := ParseFieldPath(fo.FieldPath); err != nil {
			return nil, bad("%s: fieldPath %q: %v", at, fo.FieldPath, err)
		}
		for j, ix := range fo.Indexes {
			iat := fmt.Sprintf("%s.indexes[%d]", at, j)
			if err := checkScope(ix.QueryScope); err != nil {
				return nil, bad("%s: %v", iat, err)
			}
			if err := checkIndexMode(ix.Order, ix.ArrayConfig); err != nil {
				return nil, bad("%s: %v", iat, err)
			}
		}
	}
	return &c, nil
}

func checkScope(s string) error {
	switch s {
	case "", "COLLECTION", "COLLECTION_GROUP":
		return nil
	}
	return fmt.Errorf("unknown queryScope %q (want COLLECTION or COLLECTION_GROUP)", s)
}

func checkIndexMode(order, arrayConfig string) error {
	switch {
	case order != "" && arrayConfig != "":
		return fmt.Errorf("has both order %q and arrayConfig %q; give one", order, arrayConfig)
	case order == "" && arrayConfig == "":
		return errors.New("needs an order (ASCENDING or DESCENDING) or an arrayConfig (CONTAINS)")
	case order != "" && order != "ASCENDING" && order != "DESCENDING":
		return fmt.Errorf("unknown order %q (want ASCENDING or DESCENDING)", order)
	case arrayConfig != "" && arrayConfig != "CONTAINS":
		return fmt.Errorf("unknown arrayConfig %q (want CONTAINS)", arrayConfig)
	}
	return nil
}

// lineCol returns the 1-based line and column of a byte offset.
func lineCol(data []byte, off int64) (int, int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := 1 + strings.Count(string(before), "\n")
	return line, int(off) - strings.LastIndexByte(string(before), '\n')
}

// SetIndexes turns index enforcement on with cfg, or off with nil, and
// declares cfg's indexes (DeclareIndexes).
func (e *Engine) SetIndexes(cfg *IndexConfig) {
	e.indexes.Store(cfg)
	e.DeclareIndexes(cfg)
}

// DeclareIndexes makes cfg's composite indexes, and the single-field
// indexes its field overrides declare, maintained indexes of every
// database (built beside traffic from now — queries scan, as without
// them, until they are complete; WaitIndexes waits for that — and for
// databases created later when they are):
// from then on commits keep them up to date, so the first query that uses
// one does not pay for building it. nil declares none. It enforces
// nothing (SetIndexes does). A field override that disables a field's
// single-field indexes (an empty "indexes") is not modelled: the
// emulator, like Pyric, serves such queries.
func (e *Engine) DeclareIndexes(cfg *IndexConfig) {
	ds := declaredOf(cfg)
	e.mu.Lock()
	e.declared = ds
	dbs := make([]*database, 0, len(e.dbs))
	for _, db := range e.dbs {
		dbs = append(dbs, db)
	}
	e.mu.Unlock()
	for _, db := range dbs {
		db.st.Lock()
		db.st.Declare(ds)
		db.st.Unlock()
	}
}

// WaitIndexes waits until every database's declared indexes, which
// DeclareIndexes, a reset and a restore build beside traffic, are built
// (queries use an index only once it is).
func (e *Engine) WaitIndexes() {
	for _, db := range e.databases() {
		db.st.WaitIndexes()
	}
}

// declaredOf converts an index file's indexes to the storage layer's.
// Field order and direction do not matter there (an index is walked
// either way and equality fields are a prefix in any order); a trailing
// __name__ is the tiebreak every index ends with.
func declaredOf(cfg *IndexConfig) []fsstore.Declared {
	if cfg == nil {
		return nil
	}
	var out []fsstore.Declared
	for _, ix := range cfg.Indexes {
		d := fsstore.Declared{Group: ix.QueryScope == "COLLECTION_GROUP", Collection: ix.CollectionGroup}
		for _, f := range ix.Fields {
			fp, err := ParseFieldPath(f.FieldPath)
			if err != nil || fp.IsName() {
				continue // a trailing __name__ (ParseIndexFile rejects others)
			}
			d.Fields = append(d.Fields, fsstore.IndexField{Path: fp, Contains: f.ArrayConfig != ""})
		}
		if len(d.Fields) > 0 {
			out = append(out, d)
		}
	}
	for _, fo := range cfg.FieldOverrides {
		fp, err := ParseFieldPath(fo.FieldPath)
		if err != nil || fp.IsName() {
			continue
		}
		for _, ix := range fo.Indexes {
			out = append(out, fsstore.Declared{Group: ix.QueryScope == "COLLECTION_GROUP", Collection: fo.CollectionGroup,
				Fields: []fsstore.IndexField{{Path: fp, Contains: ix.ArrayConfig != ""}}})
		}
	}
	return out
}

// MaintainedIndex describes one index a database keeps up to date.
type MaintainedIndex = fsstore.IndexInfo

// MaintainedIndexes lists the indexes the database keeps up to date
// (declared ones and those built on demand), sorted by scope and fields.
func (e *Engine) MaintainedIndexes(name DatabaseName) []MaintainedIndex {
	db := e.existing(name)
	if db == nil {
		return nil
	}
	db.st.RLock()
	defer db.st.RUnlock()
	return db.st.IndexInfos()
}

// need is the index a query needs: equality fields (any order), then
// ordered fields.
type need struct {
	eq     []IndexField
	orders []IndexField
	group  bool
}

// checkIndex enforces declared indexes, if enforcement is on.
func (e *Engine) checkIndex(q *query) error {
	cfg := e.indexes.Load()
	if cfg == nil {
		return nil
	}
	n, ok := q.indexNeed()
	if !ok {
		return nil
	}
	if cfg.serves(q.collID, n) {
		return nil
	}
	want := IndexDef{CollectionGroup: q.collID, QueryScope: "COLLECTION", Fields: append(slices.Clone(n.eq), n.orders...)}
	if n.group {
		want.QueryScope = "COLLECTION_GROUP"
	}
	js, _ := json.Marshal(want)
	return fsvalue.Errorf(ErrFailedPrecondition, "The query requires an index. Add this index to the \"indexes\" of firestore.indexes.json: %s", js)
}

// indexNeed derives the composite index a query needs; ok is false when the
// automatic single-field indexes serve it. Queries with OR filters are not
// checked.
func (q *query) indexNeed() (need, bool) {
	n := need{group: q.allDesc}
	eqSeen := map[string]bool{}
	var conj []*filter
	if q.filter != nil {
		if q.filter.kind == fAnd {
			conj = q.filter.subs
		} else {
			conj = []*filter{q.filter}
		}
	}
	for _, f := range conj {
		switch f.kind {
		case fOr, fAnd:
			return n, false
		case fField:
			switch f.op {
			case pb.StructuredQuery_FieldFilter_EQUAL, pb.StructuredQuery_FieldFilter_IN:
				if !f.fp.IsName() && !eqSeen[f.fp.String()] {
					eqSeen[f.fp.String()] = true
					n.eq = append(n.eq, IndexField{FieldPath: f.fp.String(), Order: "ASCENDING"})
				}
			case pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS, pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS_ANY:
				n.eq = append(n.eq, IndexField{FieldPath: f.fp.String(), ArrayConfig: "CONTAINS"})
			}
		case fUnary:
			if f.uop == pb.StructuredQuery_UnaryFilter_IS_NULL || f.uop == pb.StructuredQuery_UnaryFilter_IS_NAN {
				if !eqSeen[f.fp.String()] {
					eqSeen[f.fp.String()] = true
					n.eq = append(n.eq, IndexField{FieldPath: f.fp.String(), Order: "ASCENDING"})
				}
			}
		}
	}
	for _, o := range q.orders {
		if o.fp.IsName() || eqSeen[o.fp.String()] {
			continue
		}
		dir := "ASCENDING"
		if o.desc {
			dir = "DESCENDING"
		}
		n.orders = append(n.orders, IndexField{FieldPath: o.fp.String(), Order: dir})
	}
	fields := len(n.eq) + len(n.orders)
	switch {
	case len(n.orders) >= 2, len(n.orders) == 1 && len(n.eq) > 0:
		return n, true
	case n.group && fields > 0:
		return n, true // collection-group scope is never automatic
	}
	return n, false
}

// serves reports whether a declared index (or, for one field, a field
// override) serves the need.
func (c *IndexConfig) serves(coll string, n need) bool {
	_, ok := c.servingIndex(coll, n)
	return ok
}

// servingIndex is the declared index that serves the need (serves), with
// its fields as declared; a field override serving it answers the need's
// own fields.
func (c *IndexConfig) servingIndex(coll string, n need) ([]IndexField, bool) {
	all := append(slices.Clone(n.eq), n.orders...)
	if n.group && len(all) == 1 {
		for _, fo := range c.FieldOverrides {
			if fo.CollectionGroup != coll || fo.FieldPath != all[0].FieldPath {
				continue
			}
			for _, ix := range fo.Indexes {
				if ix.QueryScope == "COLLECTION_GROUP" && ix.Order == all[0].Order && ix.ArrayConfig == all[0].ArrayConfig {
					return all, true
				}
			}
		}
	}
	for _, ix := range c.Indexes {
		if ix.CollectionGroup != coll {
			continue
		}
		if n.group && ix.QueryScope != "COLLECTION_GROUP" {
			continue
		}
		fields := ix.Fields
		if k := len(fields); k > 0 && fields[k-1].FieldPath == NameField {
			fields = fields[:k-1]
		}
		if len(fields) != len(all) {
			continue
		}
		if matchIndex(fields, n, false) || matchIndex(fields, n, true) {
			return ix.Fields, true
		}
	}
	return nil, false
}

func matchIndex(fields []IndexField, n need, flipped bool) bool {
	eq := map[string]IndexField{}
	for _, f := range n.eq {
		eq[f.FieldPath] = f
	}
	for _, f := range fields[:len(n.eq)] {
		w, ok := eq[canonicalPath(f.FieldPath)]
		if !ok || (w.ArrayConfig != "") != (f.ArrayConfig != "") {
			return false
		}
		delete(eq, canonicalPath(f.FieldPath))
	}
	for i, f := range fields[len(n.eq):] {
		w := n.orders[i]
		order := w.Order
		if flipped {
			order = map[string]string{"ASCENDING": "DESCENDING", "DESCENDING": "ASCENDING"}[order]
		}
		if canonicalPath(f.FieldPath) != w.FieldPath || !strings.EqualFold(f.Order, order) {
			return false
		}
	}
	return true
}

func canonicalPath(s string) string {
	fp, err := ParseFieldPath(s)
	if err != nil {
		return s
	}
	return fp.String()
}
