package firestore

import (
	"math"
	"unicode/utf8"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/firestore/fsvalue"
)

// MaxDocumentBytes is production's limit on a document's size as computed by
// DocumentSize.
const MaxDocumentBytes = 1 << 20

// maxDepth is production's limit on map/array nesting in a document.
const maxDepth = 20

// validateFields checks a document's fields as production does on write.
func validateFields(fields map[string]*pb.Value) error {
	for k, v := range fields {
		if err := validateEntry(FieldPath{k}, k, v, 1); err != nil {
			return err
		}
	}
	return nil
}

func validateKey(at FieldPath, k string) error {
	switch {
	case k == "":
		return fsvalue.Errorf(ErrInvalidArgument, "Field name at %q is the empty string.", FieldPath(at[:len(at)-1]).String()+".``")
	case !utf8.ValidString(k):
		return fsvalue.Errorf(ErrInvalidArgument, "Field name %q is not valid UTF-8.", k)
	case len(k) > MaxIDBytes:
		return fsvalue.Errorf(ErrInvalidArgument, "Field name %q is longer than %d bytes.", fsvalue.Truncate(k, 40), MaxIDBytes)
	case fsvalue.IsReserved(k):
		return fsvalue.Errorf(ErrInvalidArgument, "Field name %s is reserved.", at.String())
	}
	return nil
}

func validateEntry(at FieldPath, k string, v *pb.Value, depth int) error {
	if err := validateKey(at, k); err != nil {
		return err
	}
	return validateValue(at, v, depth)
}

// validateValue checks v, the value at depth (a document's field values are
// at depth 1). Only maps and arrays count towards the nesting limit: as on
// the official emulator, a field holding 20 nested maps is accepted and 21
// are "an invalid nested entity".
func validateValue(at FieldPath, v *pb.Value, depth int) error {
	switch v.GetValueType().(type) {
	case *pb.Value_MapValue, *pb.Value_ArrayValue:
		if depth > maxDepth {
			return fsvalue.Errorf(ErrInvalidArgument, "Property %s contains an invalid nested entity: maps and arrays may be nested at most %d levels deep.", at.String(), maxDepth)
		}
	}
	switch x := v.GetValueType().(type) {
	case nil:
		return fsvalue.Errorf(ErrInvalidArgument, "Property %s has a value with no type set.", at.String())
	case *pb.Value_NullValue, *pb.Value_BooleanValue, *pb.Value_IntegerValue, *pb.Value_DoubleValue,
		*pb.Value_BytesValue:
	case *pb.Value_StringValue:
		if !utf8.ValidString(x.StringValue) {
			return fsvalue.Errorf(ErrInvalidArgument, "Property %s has a string value that is not valid UTF-8.", at.String())
		}
	case *pb.Value_TimestampValue:
		t := x.TimestampValue
		if t == nil || t.Seconds < minTimestampSeconds || t.Seconds > maxTimestampSeconds || t.Nanos < 0 || t.Nanos >= 1e9 {
			return fsvalue.Errorf(ErrInvalidArgument, "Property %s has a timestamp out of range [0001-01-01T00:00:00Z, 9999-12-31T23:59:59.999999Z].", at.String())
		}
	case *pb.Value_GeoPointValue:
		g := x.GeoPointValue
		if g == nil || !(g.Latitude >= -90 && g.Latitude <= 90) || !(g.Longitude >= -180 && g.Longitude <= 180) {
			return fsvalue.Errorf(ErrInvalidArgument, "Property %s has a geo point with latitude outside [-90, 90] or longitude outside [-180, 180].", at.String())
		}
	case *pb.Value_ReferenceValue:
		if _, _, err := ParseDocumentName(x.ReferenceValue); err != nil {
			return fsvalue.Errorf(ErrInvalidArgument, "Property %s has an invalid reference value: %v", at.String(), err)
		}
	case *pb.Value_ArrayValue:
		for i, e := range x.ArrayValue.GetValues() {
			if _, nested := e.GetValueType().(*pb.Value_ArrayValue); nested {
				return fsvalue.Errorf(ErrInvalidArgument, "Property %s contains an array directly inside an array (element %d); arrays cannot hold arrays.", at.String(), i)
			}
			if err := validateValue(at, e, depth+1); err != nil {
				return err
			}
		}
	case *pb.Value_MapValue:
		m := x.MapValue.GetFields()
		if _, special := m["__type__"]; special {
			return validateVector(at, m)
		}
		for k, e := range m {
			if err := validateEntry(append(at[:len(at):len(at)], k), k, e, depth+1); err != nil {
				return err
			}
		}
	default:
		return fsvalue.Errorf(ErrInvalidArgument, "Property %s has a value of a type that cannot be stored in a document.", at.String())
	}
	return nil
}

// validateVector accepts exactly {__type__: "__vector__", value: [numbers]};
// any other map with a __type__ key is rejected, as on the official emulator.
func validateVector(at FieldPath, m map[string]*pb.Value) error {
	bad := fsvalue.Errorf(ErrInvalidArgument, "Property %s contains an invalid nested entity: a map with a __type__ key must be a vector {__type__: \"__vector__\", value: [numbers]}.", at.String())
	if len(m) != 2 || m["__type__"].GetStringValue() != "__vector__" {
		return bad
	}
	arr, ok := m["value"].GetValueType().(*pb.Value_ArrayValue)
	if !ok {
		return bad
	}
	for _, e := range arr.ArrayValue.GetValues() {
		if !fsvalue.IsNumber(e) {
			return bad
		}
	}
	return nil
}

const (
	minTimestampSeconds = -62135596800 // 0001-01-01T00:00:00Z
	maxTimestampSeconds = 253402300799 // 9999-12-31T23:59:59Z
)

// truncateTimestamps rounds every timestamp in v down to microseconds,
// the precision Firestore stores.
func truncateTimestamps(v *pb.Value) {
	switch x := v.GetValueType().(type) {
	case *pb.Value_TimestampValue:
		if x.TimestampValue != nil {
			x.TimestampValue.Nanos -= x.TimestampValue.Nanos % 1000
		}
	case *pb.Value_ArrayValue:
		for _, e := range x.ArrayValue.GetValues() {
			truncateTimestamps(e)
		}
	case *pb.Value_MapValue:
		for _, e := range x.MapValue.GetFields() {
			truncateTimestamps(e)
		}
	}
}

// DocumentSize computes a document's size as production documents it:
// the name (each path segment's UTF-8 length + 1, plus 16), plus each field
// name (length + 1) and value, plus 32.
func DocumentSize(rel string, fields map[string]*pb.Value) int {
	n := nameSize(rel) + 32
	for k, v := range fields {
		n += len(k) + 1 + valueSize(v)
	}
	return n
}

func nameSize(rel string) int {
	n := 16
	start := 0
	for i := 0; i <= len(rel); i++ {
		if i == len(rel) || rel[i] == '/' {
			n += i - start + 1
			start = i + 1
		}
	}
	return n
}

func valueSize(v *pb.Value) int {
	switch x := v.GetValueType().(type) {
	case *pb.Value_NullValue, *pb.Value_BooleanValue:
		return 1
	case *pb.Value_IntegerValue, *pb.Value_DoubleValue, *pb.Value_TimestampValue:
		return 8
	case *pb.Value_StringValue:
		return len(x.StringValue) + 1
	case *pb.Value_BytesValue:
		return len(x.BytesValue)
	case *pb.Value_GeoPointValue:
		return 16
	case *pb.Value_ReferenceValue:
		if _, rel, err := ParseDocumentName(x.ReferenceValue); err == nil {
			return nameSize(rel)
		}
		return len(x.ReferenceValue) + 1
	case *pb.Value_ArrayValue:
		n := 0
		for _, e := range x.ArrayValue.GetValues() {
			n += valueSize(e)
		}
		return n
	case *pb.Value_MapValue:
		n := 0
		for k, e := range x.MapValue.GetFields() {
			n += len(k) + 1 + valueSize(e)
		}
		return n
	}
	return 0
}

// checkSize rejects documents over MaxDocumentBytes with production's message.
func checkSize(db DatabaseName, rel string, fields map[string]*pb.Value) error {
	if n := DocumentSize(rel, fields); n > MaxDocumentBytes {
		return fsvalue.Errorf(ErrInvalidArgument, "Document '%s' cannot be written because its size (%s bytes) exceeds the maximum allowed size of 1,048,576 bytes.", db.DocName(rel), commas(n))
	}
	return nil
}

func commas(n int) string {
	s := ""
	for n >= 1000 {
		s = "," + pad3(n%1000) + s
		n /= 1000
	}
	return itoa(n) + s
}

func pad3(n int) string {
	s := itoa(n)
	for len(s) < 3 {
		s = "0" + s
	}
	return s
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

var _ = math.NaN
