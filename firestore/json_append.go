package firestore

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"slices"
	"strconv"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/firestore/fsvalue"
)

// MarshalFields is json.Marshal(EncodeFields(fields, db)), byte for byte,
// written straight from the protos: capture appends each changed document
// in this form, and a document of a 100,000-element list would otherwise
// be built as a Go map of boxed values (megabytes) only to be walked by
// encoding/json's reflection.
func MarshalFields(fields map[string]*pb.Value, db DatabaseName) []byte {
	return appendFieldsJSON(nil, fields, db)
}

func appendFieldsJSON(b []byte, fields map[string]*pb.Value, db DatabaseName) []byte {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys) // encoding/json sorts map keys
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendJSONString(b, k), ':')
		b = appendValueJSON(b, fields[k], db)
	}
	return append(b, '}')
}

// appendValueJSON appends the encoding/json form of EncodeValue(v, db);
// the marker objects' keys are written in encoding/json's sorted order.
func appendValueJSON(b []byte, v *pb.Value, db DatabaseName) []byte {
	switch x := v.GetValueType().(type) {
	case *pb.Value_NullValue, nil:
		return append(b, "null"...)
	case *pb.Value_BooleanValue:
		return strconv.AppendBool(b, x.BooleanValue)
	case *pb.Value_IntegerValue:
		return strconv.AppendInt(b, x.IntegerValue, 10)
	case *pb.Value_DoubleValue:
		f := x.DoubleValue
		marker := func(val string) []byte {
			return append(append(b, `{"__type":"float","value":`...), val...)
		}
		switch {
		case math.IsNaN(f):
			return append(marker(`"NaN"`), '}')
		case math.IsInf(f, 1):
			return append(marker(`"Infinity"`), '}')
		case math.IsInf(f, -1):
			return append(marker(`"-Infinity"`), '}')
		case f == math.Trunc(f):
			if f == 0 && math.Signbit(f) {
				return append(marker(`"-0"`), '}')
			}
			return append(marker(strconv.FormatFloat(f, 'f', -1, 64)), '}')
		}
		return strconv.AppendFloat(b, f, 'g', -1, 64)
	case *pb.Value_TimestampValue:
		b = append(b, `{"__type":"timestamp","nanos":`...)
		b = strconv.AppendInt(b, int64(x.TimestampValue.GetNanos()), 10)
		b = append(b, `,"seconds":`...)
		return append(strconv.AppendInt(b, x.TimestampValue.GetSeconds(), 10), '}')
	case *pb.Value_StringValue:
		return appendJSONString(b, x.StringValue)
	case *pb.Value_BytesValue:
		b = append(b, `{"__type":"bytes","base64":"`...)
		return append(base64.StdEncoding.AppendEncode(b, x.BytesValue), `"}`...)
	case *pb.Value_ReferenceValue:
		p := x.ReferenceValue
		if dn, rel, err := ParseDocumentName(p); err == nil && dn == db {
			p = rel
		}
		b = append(b, `{"__type":"reference","path":`...)
		return append(appendJSONString(b, p), '}')
	case *pb.Value_GeoPointValue:
		lat, _ := json.Marshal(x.GeoPointValue.GetLatitude())
		lng, _ := json.Marshal(x.GeoPointValue.GetLongitude())
		b = append(append(b, `{"__type":"latlng","lat":`...), lat...)
		return append(append(append(b, `,"lng":`...), lng...), '}')
	case *pb.Value_ArrayValue:
		b = append(b, '[')
		for i, e := range x.ArrayValue.GetValues() {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValueJSON(b, e, db)
		}
		return append(b, ']')
	case *pb.Value_MapValue:
		m := x.MapValue.GetFields()
		if fsvalue.IsVector(x.MapValue) {
			b = append(b, `{"__type__":"__vector__","value":[`...)
			for i, e := range fsvalue.VectorElems(x.MapValue) {
				if i > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendFloat(b, toFloat(e), 'g', -1, 64)
			}
			return append(b, "]}"...)
		}
		_, a := m["__type"]
		_, c := m["__type__"]
		if a || c {
			b = append(b, `{"__type":"map","value":`...)
			return append(appendFieldsJSON(b, m, db), '}')
		}
		return appendFieldsJSON(b, m, db)
	}
	return append(b, "null"...)
}

// appendJSONString appends s as encoding/json writes it (HTML-safe).
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= 0x80 {
			enc, _ := json.Marshal(s)
			return append(b, enc...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
