package firestore

import (
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

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

// ParseIndexConfig parses firestore.indexes.json.
func ParseIndexConfig(data []byte) (*IndexConfig, error) {
	var c IndexConfig
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fsvalue.Errorf(ErrInvalidArgument, "firestore.indexes.json: %v", err)
	}
	for i, ix := range c.Indexes {
		if ix.CollectionGroup == "" || len(ix.Fields) == 0 {
			return nil, fsvalue.Errorf(ErrInvalidArgument, "firestore.indexes.json: index %d needs a collectionGroup and fields", i)
		}
		for _, f := range ix.Fields {
			if _, err := ParseFieldPath(f.FieldPath); err != nil {
				return nil, fsvalue.Errorf(ErrInvalidArgument, "firestore.indexes.json: index %d: %v", i, err)
			}
		}
	}
	return &c, nil
}

// SetIndexes turns index enforcement on with cfg, or off with nil.
func (e *Engine) SetIndexes(cfg *IndexConfig) { e.indexes.Store(cfg) }

var _ atomic.Bool

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
	all := append(slices.Clone(n.eq), n.orders...)
	if n.group && len(all) == 1 {
		for _, fo := range c.FieldOverrides {
			if fo.CollectionGroup != coll || fo.FieldPath != all[0].FieldPath {
				continue
			}
			for _, ix := range fo.Indexes {
				if ix.QueryScope == "COLLECTION_GROUP" && ix.Order == all[0].Order && ix.ArrayConfig == all[0].ArrayConfig {
					return true
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
			return true
		}
	}
	return false
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
