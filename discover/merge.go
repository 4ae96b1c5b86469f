package discover

import (
	"encoding/base64"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

// EnumThreshold is the most distinct values an enum candidate may have.
const EnumThreshold = 10

// FieldType is one observed type of a field. Kind is scalar (Type says
// which: boolean, integer, double, timestamp, string, bytes, geopoint),
// reference (TargetCollection in template form), array (ElementTypes),
// map (Fields) or vector (Dimension). Null is never a type: it sets
// FieldDescriptor.Nullable.
type FieldType struct {
	Kind             string                      `json:"kind"`
	Type             string                      `json:"type,omitempty"`
	TargetCollection string                      `json:"targetCollection,omitempty"`
	ElementTypes     []*FieldType                `json:"elementTypes,omitempty"`
	Fields           map[string]*FieldDescriptor `json:"fields,omitempty"`
	Dimension        int                         `json:"dimension,omitempty"`

	seen int // maps: how many were merged (the presence denominator of Fields)
}

// Key identifies a type for deduplication: maps merge into one map type,
// arrays into one array type, references per target and vectors per
// dimension.
func (t *FieldType) Key() string {
	switch t.Kind {
	case "scalar":
		return "s:" + t.Type
	case "reference":
		return "r:" + t.TargetCollection
	case "vector":
		return fmt.Sprintf("v:%d", t.Dimension)
	}
	return t.Kind
}

// EnumCandidate is a low-cardinality value set: present while the field
// has at most Threshold distinct values and at most half as many as the
// samples that had it.
type EnumCandidate struct {
	Qualifies bool  `json:"qualifies"`
	Values    []any `json:"values"`
	Threshold int   `json:"threshold"`
}

// FieldDescriptor is what the samples say about one field.
type FieldDescriptor struct {
	Types []*FieldType `json:"types"`
	// PresenceSeen of PresenceTotal samples had the field (the total counts
	// samples where it was absent too).
	PresenceSeen   int            `json:"presenceSeen"`
	PresenceTotal  int            `json:"presenceTotal"`
	Nullable       bool           `json:"nullable"`
	EnumCandidate  *EnumCandidate `json:"enumCandidate,omitempty"`
	Example        any            `json:"example,omitempty"`
	ReservedReason string         `json:"reservedReason,omitempty"`

	enumValues  []any // distinct enumerable values so far
	enumSeen    int   // enumerable observations
	enumDropped bool
}

// Change is one schema change a merge made; Kind is field_added,
// type_expanded, presence_changed, enum_added, enum_widened, enum_dropped,
// vector_dim_drift or became_nullable. Path uses "[]" for array elements.
type Change struct {
	Kind           string     `json:"kind"`
	Path           []string   `json:"path"`
	Type           *FieldType `json:"type,omitempty"`
	AddedType      *FieldType `json:"addedType,omitempty"`
	PresenceSeen   int        `json:"presenceSeen,omitempty"`
	PresenceTotal  int        `json:"presenceTotal,omitempty"`
	Values         []any      `json:"values,omitempty"`
	AddedValue     any        `json:"addedValue,omitempty"`
	Reason         string     `json:"reason,omitempty"`
	AddedDimension int        `json:"addedDimension,omitempty"`
}

// Schema is the merged schema of the documents fed to Merge.
type Schema struct {
	Fields      map[string]*FieldDescriptor `json:"fields"`
	SamplesSeen int                         `json:"samplesSeen"`
}

// NewSchema returns an empty schema.
func NewSchema() *Schema { return &Schema{Fields: map[string]*FieldDescriptor{}} }

// Merge folds one document's fields into the schema and returns the
// changes it made (none means the document confirmed the schema).
func (s *Schema) Merge(fields map[string]*pb.Value) []Change {
	s.SamplesSeen++
	var ch []Change
	mergeFields(s.Fields, fields, s.SamplesSeen, nil, &ch)
	return ch
}

func appendPath(p []string, seg string) []string {
	return append(append(make([]string, 0, len(p)+1), p...), seg)
}

func mergeFields(into map[string]*FieldDescriptor, obs map[string]*pb.Value, total int, path []string, ch *[]Change) {
	names := make([]string, 0, len(obs))
	for k := range obs {
		names = append(names, k)
	}
	sort.Strings(names)
	present := make(map[string]bool, len(obs))
	for _, name := range names {
		present[name] = true
		p := appendPath(path, name)
		d := into[name]
		isNew := d == nil
		if isNew {
			d = &FieldDescriptor{Types: []*FieldType{}, ReservedReason: ReservedReason(name), PresenceTotal: total - 1}
			into[name] = d
		}
		at := len(*ch)
		added := observe(d, obs[name], p, ch)
		d.PresenceSeen++
		d.PresenceTotal = total
		if isNew {
			c := Change{Kind: "field_added", Path: p}
			if len(d.Types) > 0 {
				c.Type = d.Types[0]
			} else {
				c.Type = &FieldType{Kind: "scalar", Type: "null"}
			}
			// field_added goes before whatever observe reported for it.
			*ch = append((*ch)[:at], append([]Change{c}, (*ch)[at:]...)...)
		} else if added != nil {
			*ch = append(*ch, Change{Kind: "type_expanded", Path: p, AddedType: added})
		}
	}
	absent := make([]string, 0)
	for name := range into {
		if !present[name] {
			absent = append(absent, name)
		}
	}
	sort.Strings(absent)
	for _, name := range absent {
		d := into[name]
		wasAlways := d.PresenceSeen == d.PresenceTotal
		d.PresenceTotal = total
		if wasAlways {
			*ch = append(*ch, Change{Kind: "presence_changed", Path: appendPath(path, name), PresenceSeen: d.PresenceSeen, PresenceTotal: total})
		}
	}
}

// observe merges one value into d and returns the type it added, if any.
func observe(d *FieldDescriptor, v *pb.Value, path []string, ch *[]Change) *FieldType {
	if _, ok := v.GetValueType().(*pb.Value_NullValue); ok || v == nil || v.GetValueType() == nil {
		if !d.Nullable {
			d.Nullable = true
			*ch = append(*ch, Change{Kind: "became_nullable", Path: path})
		}
		return nil
	}
	if d.Example == nil {
		d.Example = example(v, 0)
	}
	t := typeOf(v)
	var added *FieldType
	existing := findType(d.Types, t.Key())
	if existing == nil && len(d.Types) > 0 && !d.enumDropped {
		// A second type ends enum tracking.
		if d.EnumCandidate != nil {
			*ch = append(*ch, Change{Kind: "enum_dropped", Path: path, Reason: "type_widened"})
		}
		d.enumDropped, d.EnumCandidate, d.enumValues = true, nil, nil
	}
	observeEnum(d, v, path, ch)
	if existing == nil {
		if t.Kind == "vector" {
			for _, o := range d.Types {
				if o.Kind == "vector" {
					*ch = append(*ch, Change{Kind: "vector_dim_drift", Path: path, AddedDimension: t.Dimension})
					d.Types = append(d.Types, t)
					return nil
				}
			}
		}
		existing = &FieldType{Kind: t.Kind, Type: t.Type, TargetCollection: t.TargetCollection, Dimension: t.Dimension}
		if t.Kind == "map" {
			existing.Fields = map[string]*FieldDescriptor{}
		}
		if t.Kind == "array" {
			existing.ElementTypes = []*FieldType{}
		}
		d.Types = append(d.Types, existing)
		added = existing
	}
	// Nested changes are reported only for types that already existed:
	// a new type's field_added/type_expanded carries its whole shape.
	var nested []Change
	sink := ch
	if added != nil {
		sink = &nested
	}
	mergeInto(existing, v, path, sink)
	return added
}

// mergeInto merges the contents of v (a map or an array) into type t.
func mergeInto(t *FieldType, v *pb.Value, path []string, ch *[]Change) {
	switch t.Kind {
	case "map":
		t.seen++
		mergeFields(t.Fields, v.GetMapValue().GetFields(), t.seen, path, ch)
	case "array":
		p := appendPath(path, "[]")
		for _, el := range v.GetArrayValue().GetValues() {
			if _, ok := el.GetValueType().(*pb.Value_NullValue); ok {
				continue
			}
			et := typeOf(el)
			ex := findType(t.ElementTypes, et.Key())
			if ex == nil {
				ex = &FieldType{Kind: et.Kind, Type: et.Type, TargetCollection: et.TargetCollection, Dimension: et.Dimension}
				if ex.Kind == "map" {
					ex.Fields = map[string]*FieldDescriptor{}
				}
				if ex.Kind == "array" {
					ex.ElementTypes = []*FieldType{}
				}
				t.ElementTypes = append(t.ElementTypes, ex)
				var nested []Change
				mergeInto(ex, el, p, &nested)
				*ch = append(*ch, Change{Kind: "type_expanded", Path: p, AddedType: ex})
				continue
			}
			mergeInto(ex, el, p, ch)
		}
	}
}

func findType(ts []*FieldType, key string) *FieldType {
	for _, t := range ts {
		if t.Key() == key {
			return t
		}
	}
	return nil
}

// typeOf is the shallow type of a non-null value.
func typeOf(v *pb.Value) *FieldType {
	switch x := v.GetValueType().(type) {
	case *pb.Value_BooleanValue:
		return &FieldType{Kind: "scalar", Type: "boolean"}
	case *pb.Value_IntegerValue:
		return &FieldType{Kind: "scalar", Type: "integer"}
	case *pb.Value_DoubleValue:
		return &FieldType{Kind: "scalar", Type: "double"}
	case *pb.Value_TimestampValue:
		return &FieldType{Kind: "scalar", Type: "timestamp"}
	case *pb.Value_StringValue:
		return &FieldType{Kind: "scalar", Type: "string"}
	case *pb.Value_BytesValue:
		return &FieldType{Kind: "scalar", Type: "bytes"}
	case *pb.Value_GeoPointValue:
		return &FieldType{Kind: "scalar", Type: "geopoint"}
	case *pb.Value_ReferenceValue:
		return &FieldType{Kind: "reference", TargetCollection: referenceTarget(x.ReferenceValue)}
	case *pb.Value_ArrayValue:
		return &FieldType{Kind: "array"}
	case *pb.Value_MapValue:
		if dim, ok := vectorDim(x.MapValue); ok {
			return &FieldType{Kind: "vector", Dimension: dim}
		}
		return &FieldType{Kind: "map"}
	}
	return &FieldType{Kind: "scalar", Type: "null"}
}

// referenceTarget is the template path of the collection a reference
// points into.
func referenceTarget(name string) string {
	rel := name
	if i := strings.Index(name, "/documents/"); i >= 0 {
		rel = name[i+len("/documents/"):]
	}
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		rel = rel[:i]
	}
	return TemplatePath(rel)
}

// vectorDim recognises Firestore's vector encoding: a map whose __type__
// is "__vector__" and whose value is an array of numbers.
func vectorDim(m *pb.MapValue) (int, bool) {
	f := m.GetFields()
	if f["__type__"].GetStringValue() != "__vector__" {
		return 0, false
	}
	arr, ok := f["value"].GetValueType().(*pb.Value_ArrayValue)
	if !ok {
		return 0, false
	}
	return len(arr.ArrayValue.GetValues()), true
}

func observeEnum(d *FieldDescriptor, v *pb.Value, path []string, ch *[]Change) {
	if d.enumDropped {
		return
	}
	var val any
	switch x := v.GetValueType().(type) {
	case *pb.Value_StringValue:
		val = x.StringValue
	case *pb.Value_IntegerValue:
		val = x.IntegerValue
	case *pb.Value_DoubleValue:
		if math.IsNaN(x.DoubleValue) || math.IsInf(x.DoubleValue, 0) {
			val = fmt.Sprint(x.DoubleValue)
		} else {
			val = x.DoubleValue
		}
	default:
		d.enumDropped = true
		if d.EnumCandidate != nil {
			*ch = append(*ch, Change{Kind: "enum_dropped", Path: path, Reason: "type_widened"})
		}
		d.EnumCandidate, d.enumValues = nil, nil
		return
	}
	d.enumSeen++
	isNew := true
	for _, x := range d.enumValues {
		if x == val {
			isNew = false
			break
		}
	}
	if isNew {
		d.enumValues = append(d.enumValues, val)
	}
	if len(d.enumValues) > EnumThreshold {
		d.enumDropped = true
		if d.EnumCandidate != nil {
			*ch = append(*ch, Change{Kind: "enum_dropped", Path: path, Reason: "over_threshold"})
		}
		d.EnumCandidate, d.enumValues = nil, nil
		return
	}
	qualifies := len(d.enumValues) <= d.enumSeen/2
	was := d.EnumCandidate != nil
	if !qualifies {
		// A candidate that no longer qualifies is simply withdrawn; it may
		// qualify again as samples accumulate.
		d.EnumCandidate = nil
		return
	}
	vals := append([]any(nil), d.enumValues...)
	d.EnumCandidate = &EnumCandidate{Qualifies: true, Values: vals, Threshold: EnumThreshold}
	switch {
	case !was:
		*ch = append(*ch, Change{Kind: "enum_added", Path: path, Values: vals})
	case isNew:
		*ch = append(*ch, Change{Kind: "enum_widened", Path: path, AddedValue: val})
	}
}

// example is a JSON-safe rendering of a value, bounded in size.
func example(v *pb.Value, depth int) any {
	switch x := v.GetValueType().(type) {
	case *pb.Value_BooleanValue:
		return x.BooleanValue
	case *pb.Value_IntegerValue:
		return x.IntegerValue
	case *pb.Value_DoubleValue:
		if math.IsNaN(x.DoubleValue) || math.IsInf(x.DoubleValue, 0) {
			return fmt.Sprint(x.DoubleValue)
		}
		return x.DoubleValue
	case *pb.Value_TimestampValue:
		return x.TimestampValue.AsTime().UTC().Format(time.RFC3339Nano)
	case *pb.Value_StringValue:
		s := x.StringValue
		if len(s) > 200 {
			s = s[:200] + "…"
		}
		return s
	case *pb.Value_BytesValue:
		b := x.BytesValue
		if len(b) > 64 {
			b = b[:64]
		}
		return base64.StdEncoding.EncodeToString(b)
	case *pb.Value_GeoPointValue:
		return map[string]any{"latitude": x.GeoPointValue.GetLatitude(), "longitude": x.GeoPointValue.GetLongitude()}
	case *pb.Value_ReferenceValue:
		return x.ReferenceValue
	case *pb.Value_ArrayValue:
		if depth > 3 {
			return []any{}
		}
		out := []any{}
		for i, e := range x.ArrayValue.GetValues() {
			if i == 5 {
				break
			}
			out = append(out, example(e, depth+1))
		}
		return out
	case *pb.Value_MapValue:
		if dim, ok := vectorDim(x.MapValue); ok {
			return map[string]any{"vector": dim}
		}
		out := map[string]any{}
		if depth > 3 {
			return out
		}
		for k, e := range x.MapValue.GetFields() {
			if len(out) == 20 {
				break
			}
			out[k] = example(e, depth+1)
		}
		return out
	}
	return nil
}
