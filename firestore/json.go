package firestore

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/genproto/googleapis/type/latlng"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pyric/pyric/firestore/fsvalue"
)

// The JSON form of documents used by snapshots, fixtures and events is the
// original sandbox's: plain JSON for null, booleans, integers, non-integral
// doubles, strings, arrays and maps, and marker objects for the rest:
//
//	{"__type": "float", "value": 1}            a double with an integral value (or "NaN", "Infinity", "-Infinity")
//	{"__type": "timestamp", "seconds": s, "nanos": n}
//	{"__type": "bytes", "base64": "AQID"}
//	{"__type": "latlng", "lat": 1.5, "lng": 2}
//	{"__type": "reference", "path": "users/alice"}   relative within the database, else a full resource name
//	{"__type__": "__vector__", "value": [1, 2]}
//	{"__type": "map", "value": {...}}           a map whose own keys would look like a marker
//
// Integers are written exactly (beyond 2^53 too); decoding accepts the
// same forms plus firestore/timestamp/1.0-style markers for timestamps,
// bytes and geo points.

// EncodeFields converts document fields to their JSON form; references in
// db are written relative.
func EncodeFields(fields map[string]*pb.Value, db DatabaseName) map[string]any {
	return encodeFields(fields, db, nil)
}

func encodeFields(fields map[string]*pb.Value, db DatabaseName, memo *encodeMemo) map[string]any {
	out := make(map[string]any, len(fields))
	for k, v := range fields {
		out[k] = encodeValue(v, db, memo)
	}
	return out
}

// encodeMemo remembers the JSON forms of the arrays and maps encoded for
// one operation's events, by identity, so that the same proto value
// encoded for several of them (a write's fields are the request event's
// data and the commit event's written data) is one Go value they share:
// a write of a 100,000-element list is then not copied once per event
// field into every subscriber's queue. The forms are shared, so their
// consumers must not modify them (nor do they).
//
// Its maps are made on first use: most writes have no array or map
// field, and two empty maps per write were a tenth of a set's
// allocations in the engine.
type encodeMemo struct {
	arrays map[*pb.ArrayValue][]any
	maps   map[*pb.MapValue]any
	// written is the JSON form of the fields the write sends
	// (opState.written), once encoded.
	written map[string]any
	// docs are the JSON forms of the fields of the documents encoded
	// whole (the write's document before and after it), by identity:
	// the request event's resource and the commit event's before share
	// one.
	docs [2]docFields
}

type docFields struct {
	d   *pb.Document
	enc map[string]any
}

// fields is the JSON form of d's fields, encoded once per memo (for its
// first two documents; a nil memo encodes every time).
func (m *encodeMemo) fields(d *pb.Document, db DatabaseName) map[string]any {
	if m == nil {
		return encodeFields(d.Fields, db, nil)
	}
	for _, x := range m.docs {
		if x.d == d {
			return x.enc
		}
	}
	enc := encodeFields(d.Fields, db, m)
	for i := range m.docs {
		if m.docs[i].d == nil {
			m.docs[i] = docFields{d, enc}
			break
		}
	}
	return enc
}

// Small integers' JSON forms (json.Number, boxed) are made once and
// shared: an integer field's form was two allocations (its digits and
// the box), and most integers documents hold are small. The forms are
// read-only, as every encoded form is.
const (
	minSharedInt = -128
	maxSharedInt = 1023
)

var sharedInts = func() (t [maxSharedInt - minSharedInt + 1]any) {
	for i := range t {
		t[i] = json.Number(strconv.FormatInt(int64(i+minSharedInt), 10))
	}
	return t
}()

// integerForm is the JSON form of integer n.
func integerForm(n int64) any {
	if n >= minSharedInt && n <= maxSharedInt {
		return sharedInts[n-minSharedInt]
	}
	return json.Number(strconv.FormatInt(n, 10))
}

// EncodeValue converts a value to its JSON form.
func EncodeValue(v *pb.Value, db DatabaseName) any {
	return encodeValue(v, db, nil)
}

func encodeValue(v *pb.Value, db DatabaseName, memo *encodeMemo) any {
	switch x := v.GetValueType().(type) {
	case *pb.Value_NullValue, nil:
		return nil
	case *pb.Value_BooleanValue:
		return x.BooleanValue
	case *pb.Value_IntegerValue:
		return integerForm(x.IntegerValue)
	case *pb.Value_DoubleValue:
		f := x.DoubleValue
		switch {
		case math.IsNaN(f):
			return map[string]any{"__type": "float", "value": "NaN"}
		case math.IsInf(f, 1):
			return map[string]any{"__type": "float", "value": "Infinity"}
		case math.IsInf(f, -1):
			return map[string]any{"__type": "float", "value": "-Infinity"}
		case f == math.Trunc(f):
			if f == 0 && math.Signbit(f) {
				return map[string]any{"__type": "float", "value": "-0"}
			}
			return map[string]any{"__type": "float", "value": json.Number(strconv.FormatFloat(f, 'f', -1, 64))}
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
	case *pb.Value_TimestampValue:
		return map[string]any{"__type": "timestamp", "seconds": x.TimestampValue.GetSeconds(), "nanos": x.TimestampValue.GetNanos()}
	case *pb.Value_StringValue:
		return x.StringValue
	case *pb.Value_BytesValue:
		return map[string]any{"__type": "bytes", "base64": base64.StdEncoding.EncodeToString(x.BytesValue)}
	case *pb.Value_ReferenceValue:
		p := x.ReferenceValue
		if dn, rel, err := ParseDocumentName(p); err == nil && dn == db {
			p = rel
		}
		return map[string]any{"__type": "reference", "path": p}
	case *pb.Value_GeoPointValue:
		return map[string]any{"__type": "latlng", "lat": x.GeoPointValue.GetLatitude(), "lng": x.GeoPointValue.GetLongitude()}
	case *pb.Value_ArrayValue:
		if out, ok := memo.array(x.ArrayValue); ok {
			return out
		}
		out := make([]any, len(x.ArrayValue.GetValues()))
		for i, e := range x.ArrayValue.GetValues() {
			out[i] = encodeValue(e, db, memo)
		}
		if memo != nil && x.ArrayValue != nil {
			if memo.arrays == nil {
				memo.arrays = map[*pb.ArrayValue][]any{}
			}
			memo.arrays[x.ArrayValue] = out
		}
		return out
	case *pb.Value_MapValue:
		if out, ok := memo.mapValue(x.MapValue); ok {
			return out
		}
		out := encodeMap(x.MapValue, db, memo)
		if memo != nil && x.MapValue != nil {
			if memo.maps == nil {
				memo.maps = map[*pb.MapValue]any{}
			}
			memo.maps[x.MapValue] = out
		}
		return out
	}
	return nil
}

func (m *encodeMemo) array(a *pb.ArrayValue) ([]any, bool) {
	if m == nil || a == nil {
		return nil, false
	}
	out, ok := m.arrays[a]
	return out, ok
}

func (m *encodeMemo) mapValue(mv *pb.MapValue) (any, bool) {
	if m == nil || mv == nil {
		return nil, false
	}
	out, ok := m.maps[mv]
	return out, ok
}

// encodeMap is a map value's JSON form: a vector, an escaped map whose
// keys look like a marker, or a plain object.
func encodeMap(mv *pb.MapValue, db DatabaseName, memo *encodeMemo) any {
	m := mv.GetFields()
	if fsvalue.IsVector(mv) {
		var vs []any
		for _, e := range fsvalue.VectorElems(mv) {
			vs = append(vs, json.Number(strconv.FormatFloat(toFloat(e), 'g', -1, 64)))
		}
		if vs == nil {
			vs = []any{}
		}
		return map[string]any{"__type__": "__vector__", "value": vs}
	}
	enc := encodeFields(m, db, memo)
	if _, a := m["__type"]; a {
		return map[string]any{"__type": "map", "value": enc}
	}
	if _, b := m["__type__"]; b {
		return map[string]any{"__type": "map", "value": enc}
	}
	return enc
}

// DecodeJSONFields parses a JSON object of fields in the marker form.
func DecodeJSONFields(data []byte, db DatabaseName) (map[string]*pb.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fsvalue.Errorf(ErrInvalidArgument, "fields: %v", err)
	}
	return DecodeFields(m, db)
}

// DecodeFields converts the JSON form (as decoded with UseNumber, or built
// from Go values) back to fields. Go ints, floats and time-free natives
// are accepted too, so callers can pass literal maps.
func DecodeFields(m map[string]any, db DatabaseName) (map[string]*pb.Value, error) {
	out := make(map[string]*pb.Value, len(m))
	for k, v := range m {
		pv, err := decodeValue(v, db, FieldPath{k})
		if err != nil {
			return nil, err
		}
		out[k] = pv
	}
	return out, nil
}

// DecodeValue converts one JSON-form value.
func DecodeValue(v any, db DatabaseName) (*pb.Value, error) { return decodeValue(v, db, FieldPath{}) }

func decodeValue(v any, db DatabaseName, at FieldPath) (*pb.Value, error) {
	bad := func(format string, args ...any) error {
		return fsvalue.Errorf(ErrInvalidArgument, "field %s: "+format, append([]any{at.String()}, args...)...)
	}
	switch x := v.(type) {
	case nil:
		return Null(), nil
	case bool:
		return Bool(x), nil
	case string:
		return String(x), nil
	case int:
		return Int(int64(x)), nil
	case int64:
		return Int(x), nil
	case int32:
		return Int(int64(x)), nil
	case float64:
		return Double(x), nil
	case float32:
		return Double(float64(x)), nil
	case []byte:
		return &pb.Value{ValueType: &pb.Value_BytesValue{BytesValue: x}}, nil
	case *pb.Value:
		return x, nil
	case json.Number:
		s := string(x)
		if !strings.ContainsAny(s, ".eE") {
			i, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, bad("integer %s is out of the 64-bit range", s)
			}
			return Int(i), nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, bad("invalid number %s", s)
		}
		return Double(f), nil
	case []any:
		vs := make([]*pb.Value, len(x))
		for i, e := range x {
			ev, err := decodeValue(e, db, at)
			if err != nil {
				return nil, err
			}
			vs[i] = ev
		}
		return Array(vs...), nil
	case map[string]any:
		if t, ok := x["__type__"]; ok && t == "__vector__" {
			arr, ok := x["value"].([]any)
			if !ok || len(x) != 2 {
				return nil, bad("a vector marker needs exactly __type__ and a value array")
			}
			fs := make([]float64, len(arr))
			for i, e := range arr {
				f, ok := number(e)
				if !ok {
					return nil, bad("vector element %d is not a number", i)
				}
				fs[i] = f
			}
			return Vector(fs...), nil
		}
		if t, ok := x["__type"].(string); ok {
			return decodeMarker(t, x, db, at, bad)
		}
		fields := make(map[string]*pb.Value, len(x))
		for k, e := range x {
			ev, err := decodeValue(e, db, append(at[:len(at):len(at)], k))
			if err != nil {
				return nil, err
			}
			fields[k] = ev
		}
		return Map(fields), nil
	}
	return nil, bad("unsupported JSON value of type %T", v)
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	}
	return 0, false
}

func decodeMarker(t string, x map[string]any, db DatabaseName, at FieldPath, bad func(string, ...any) error) (*pb.Value, error) {
	switch t {
	case "float":
		switch s := x["value"].(type) {
		case string:
			switch s {
			case "NaN":
				return Double(math.NaN()), nil
			case "Infinity":
				return Double(math.Inf(1)), nil
			case "-Infinity":
				return Double(math.Inf(-1)), nil
			case "-0":
				return Double(math.Copysign(0, -1)), nil
			}
			return nil, bad("float marker value %q is not a number", s)
		default:
			f, ok := number(s)
			if !ok {
				return nil, bad("float marker needs a numeric value")
			}
			return Double(f), nil
		}
	case "timestamp", "firestore/timestamp/1.0":
		s, ok1 := number(x["seconds"])
		nk := "nanos"
		if _, ok := x[nk]; !ok {
			nk = "nanoseconds"
		}
		n, ok2 := number(x[nk])
		if !ok1 || !ok2 || s != math.Trunc(s) || n != math.Trunc(n) || n < 0 || n >= 1e9 || s < minTimestampSeconds || s > maxTimestampSeconds {
			return nil, bad("timestamp marker needs integral seconds in range and nanos in [0, 1e9)")
		}
		return &pb.Value{ValueType: &pb.Value_TimestampValue{TimestampValue: &timestamppb.Timestamp{Seconds: int64(s), Nanos: int32(n)}}}, nil
	case "bytes", "firestore/bytes/1.0":
		s, ok := x["base64"].(string)
		if !ok {
			s, ok = x["value"].(string)
		}
		if !ok {
			return nil, bad("bytes marker needs a base64 string")
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, bad("bytes marker: %v", err)
		}
		return &pb.Value{ValueType: &pb.Value_BytesValue{BytesValue: b}}, nil
	case "latlng", "firestore/geoPoint/1.0":
		la, ok1 := number(firstOf(x, "lat", "latitude"))
		lo, ok2 := number(firstOf(x, "lng", "longitude"))
		if !ok1 || !ok2 {
			return nil, bad("latlng marker needs numeric lat and lng")
		}
		return &pb.Value{ValueType: &pb.Value_GeoPointValue{GeoPointValue: &latlng.LatLng{Latitude: la, Longitude: lo}}}, nil
	case "reference":
		p, ok := x["path"].(string)
		if !ok {
			return nil, bad("reference marker needs a path string")
		}
		p = strings.TrimPrefix(p, "/")
		if !strings.HasPrefix(p, "projects/") {
			if err := ValidateDocumentPath(p); err != nil {
				return nil, bad("reference: %v", err)
			}
			p = db.DocName(p)
		} else if _, _, err := ParseDocumentName(p); err != nil {
			return nil, bad("reference: %v", err)
		}
		return &pb.Value{ValueType: &pb.Value_ReferenceValue{ReferenceValue: p}}, nil
	case "map":
		m, ok := x["value"].(map[string]any)
		if !ok {
			return nil, bad("map marker needs an object value")
		}
		fields := make(map[string]*pb.Value, len(m))
		for k, e := range m {
			ev, err := decodeValue(e, db, append(at[:len(at):len(at)], k))
			if err != nil {
				return nil, err
			}
			fields[k] = ev
		}
		return Map(fields), nil
	}
	return nil, bad("unknown marker __type %q", t)
}

func firstOf(m map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v
		}
	}
	return nil
}
