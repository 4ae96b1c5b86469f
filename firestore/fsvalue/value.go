package fsvalue

import (
	"bytes"
	"cmp"
	"math"
	"slices"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

// Type ranks of Firestore's total order across types, as observed on the
// official emulator: null < boolean < number (NaN first) < timestamp <
// string < bytes < reference < geopoint < array < vector < map.
const (
	rankNull = iota
	rankBool
	rankNumber
	rankTimestamp
	rankString
	rankBytes
	rankReference
	rankGeoPoint
	rankArray
	rankVector
	rankMap
)

// TypeRank returns the rank of v in the cross-type order.
func TypeRank(v *pb.Value) int {
	switch x := v.GetValueType().(type) {
	case *pb.Value_NullValue, nil:
		return rankNull
	case *pb.Value_BooleanValue:
		return rankBool
	case *pb.Value_IntegerValue, *pb.Value_DoubleValue:
		return rankNumber
	case *pb.Value_TimestampValue:
		return rankTimestamp
	case *pb.Value_StringValue:
		return rankString
	case *pb.Value_BytesValue:
		return rankBytes
	case *pb.Value_ReferenceValue:
		return rankReference
	case *pb.Value_GeoPointValue:
		return rankGeoPoint
	case *pb.Value_ArrayValue:
		return rankArray
	case *pb.Value_MapValue:
		if IsVector(x.MapValue) {
			return rankVector
		}
		return rankMap
	default:
		return rankMap + 1
	}
}

// IsVector reports whether m is a vector value: {__type__: "__vector__", value: [...]}.
func IsVector(m *pb.MapValue) bool {
	t, ok := m.GetFields()["__type__"]
	return ok && t.GetStringValue() == "__vector__"
}

// VectorElems returns the elements of a vector value (see IsVector).
func VectorElems(m *pb.MapValue) []*pb.Value {
	return m.GetFields()["value"].GetArrayValue().GetValues()
}

// Compare orders two values as Firestore does in orderBy and range filters:
// by type rank first, then within the type. NaN equals NaN and sorts below
// every other number; integers and doubles compare numerically.
func Compare(a, b *pb.Value) int {
	ra, rb := TypeRank(a), TypeRank(b)
	if ra != rb {
		return cmp.Compare(ra, rb)
	}
	switch ra {
	case rankNull:
		return 0
	case rankBool:
		return cmpBool(a.GetBooleanValue(), b.GetBooleanValue())
	case rankNumber:
		return compareNumbers(a, b)
	case rankTimestamp:
		ta, tb := a.GetTimestampValue(), b.GetTimestampValue()
		if c := cmp.Compare(ta.GetSeconds(), tb.GetSeconds()); c != 0 {
			return c
		}
		return cmp.Compare(ta.GetNanos(), tb.GetNanos())
	case rankString:
		return strings.Compare(a.GetStringValue(), b.GetStringValue())
	case rankBytes:
		return bytes.Compare(a.GetBytesValue(), b.GetBytesValue())
	case rankReference:
		return CompareNames(a.GetReferenceValue(), b.GetReferenceValue())
	case rankGeoPoint:
		ga, gb := a.GetGeoPointValue(), b.GetGeoPointValue()
		if c := CmpFloat(ga.GetLatitude(), gb.GetLatitude()); c != 0 {
			return c
		}
		return CmpFloat(ga.GetLongitude(), gb.GetLongitude())
	case rankArray:
		return compareArrays(a.GetArrayValue().GetValues(), b.GetArrayValue().GetValues())
	case rankVector:
		// Vectors order by dimension first, then element by element.
		va, vb := VectorElems(a.GetMapValue()), VectorElems(b.GetMapValue())
		if c := cmp.Compare(len(va), len(vb)); c != 0 {
			return c
		}
		return compareArrays(va, vb)
	case rankMap:
		return compareMaps(a.GetMapValue().GetFields(), b.GetMapValue().GetFields())
	}
	return 0
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	default:
		return 1
	}
}

// CmpFloat orders doubles with NaN below everything and equal to itself;
// -0 equals +0.
func CmpFloat(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return -1
	case bn:
		return 1
	}
	return cmp.Compare(a, b)
}

func compareNumbers(a, b *pb.Value) int {
	ai, aInt := a.GetValueType().(*pb.Value_IntegerValue)
	bi, bInt := b.GetValueType().(*pb.Value_IntegerValue)
	switch {
	case aInt && bInt:
		return cmp.Compare(ai.IntegerValue, bi.IntegerValue)
	case aInt:
		return -cmpFloatInt(b.GetDoubleValue(), ai.IntegerValue)
	case bInt:
		return cmpFloatInt(a.GetDoubleValue(), bi.IntegerValue)
	default:
		return CmpFloat(a.GetDoubleValue(), b.GetDoubleValue())
	}
}

// cmpFloatInt compares a double with an integer exactly, without the
// precision loss of converting the integer to a double.
func cmpFloatInt(f float64, i int64) int {
	switch {
	case math.IsNaN(f):
		return -1
	case f < -9.223372036854775808e18:
		return -1
	case f >= 9.223372036854775808e18:
		return 1
	}
	t := math.Trunc(f)
	if c := cmp.Compare(int64(t), i); c != 0 {
		return c
	}
	return CmpFloat(f-t, 0)
}

func compareArrays(a, b []*pb.Value) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

func sortedKeys(m map[string]*pb.Value) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func compareMaps(a, b map[string]*pb.Value) int {
	ka, kb := sortedKeys(a), sortedKeys(b)
	for i := 0; i < len(ka) && i < len(kb); i++ {
		if c := strings.Compare(ka[i], kb[i]); c != 0 {
			return c
		}
		if c := Compare(a[ka[i]], b[kb[i]]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(ka), len(kb))
}

// Equal reports whether two values are equal for query filters (==, in,
// array-contains): like Compare == 0, except that NaN equals nothing and
// null equals nothing (the official emulator matches no document for
// `field == null` or `field == NaN`; clients send IS_NULL / IS_NAN).
func Equal(a, b *pb.Value) bool {
	if IsNaN(a) || IsNaN(b) || IsNull(a) || IsNull(b) {
		return false
	}
	return Compare(a, b) == 0
}

// SameValue is the equality of array transforms: numbers compare
// numerically (1 == 1.0) and NaN equals NaN, as observed with arrayUnion
// and arrayRemove on the official emulator.
func SameValue(a, b *pb.Value) bool { return Compare(a, b) == 0 }

// IsNaN reports whether v is the double NaN.
func IsNaN(v *pb.Value) bool {
	d, ok := v.GetValueType().(*pb.Value_DoubleValue)
	return ok && math.IsNaN(d.DoubleValue)
}

// IsNull reports whether v is the null value.
func IsNull(v *pb.Value) bool {
	_, ok := v.GetValueType().(*pb.Value_NullValue)
	return ok
}

// IsNumber reports whether v is an integer or a double.
func IsNumber(v *pb.Value) bool { return TypeRank(v) == rankNumber }

// Value constructors, for tests, the sandbox and adapters.

// Null returns the null value.
func Null() *pb.Value { return &pb.Value{ValueType: &pb.Value_NullValue{}} }

// Int returns an integer value.
func Int(i int64) *pb.Value { return &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: i}} }

// Double returns a double value.
func Double(f float64) *pb.Value { return &pb.Value{ValueType: &pb.Value_DoubleValue{DoubleValue: f}} }

// String returns a string value.
func String(s string) *pb.Value { return &pb.Value{ValueType: &pb.Value_StringValue{StringValue: s}} }

// Bool returns a boolean value.
func Bool(b bool) *pb.Value { return &pb.Value{ValueType: &pb.Value_BooleanValue{BooleanValue: b}} }

// Array returns an array value.
func Array(vs ...*pb.Value) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_ArrayValue{ArrayValue: &pb.ArrayValue{Values: vs}}}
}

// Map returns a map value holding fields (not copied).
func Map(fields map[string]*pb.Value) *pb.Value {
	if fields == nil {
		fields = map[string]*pb.Value{}
	}
	return &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: fields}}}
}

// Vector returns a vector value.
func Vector(xs ...float64) *pb.Value {
	vs := make([]*pb.Value, len(xs))
	for i, x := range xs {
		vs[i] = Double(x)
	}
	return Map(map[string]*pb.Value{"__type__": String("__vector__"), "value": Array(vs...)})
}
