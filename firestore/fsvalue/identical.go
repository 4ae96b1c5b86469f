package fsvalue

import (
	"bytes"
	"math"
	"slices"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/genproto/googleapis/type/latlng"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// The helpers below are proto.Clone and proto.Equal for documents' values,
// written out for the types a value is made of: a write clones every field
// it stores and compares the result with the stored document (a write that
// changes nothing keeps its update time), and the generic, reflective
// forms cost several times the direct ones on every write. A value
// carrying unknown fields, or a nil message inside a set oneof, goes
// through the proto package, so the results are always the proto
// package's.

// IdenticalFields reports whether a and b hold the same fields with the
// same values as proto.Equal sees them: same types, NaN equal to NaN,
// -0 equal to 0 (unlike Equal and SameValue, no cross-type numbers).
func IdenticalFields(a, b map[string]*pb.Value) bool {
	eq, ok := identicalFields(a, b)
	if !ok {
		return proto.Equal(&pb.MapValue{Fields: a}, &pb.MapValue{Fields: b})
	}
	return eq
}

// identicalFields is IdenticalFields; ok is false when the proto package
// must decide.
func identicalFields(a, b map[string]*pb.Value) (eq, ok bool) {
	if len(a) != len(b) {
		return false, true
	}
	for k, va := range a {
		vb, found := b[k]
		if !found {
			return false, true
		}
		if eq, ok := identical(va, vb); !ok || !eq {
			return eq, ok
		}
	}
	return true, true
}

func hasUnknown(m proto.Message) bool { return len(m.ProtoReflect().GetUnknown()) > 0 }

func identical(a, b *pb.Value) (eq, ok bool) {
	if a == nil || b == nil || a == b {
		return a == b, true
	}
	// Unknown fields only matter when the known ones are equal (proto.Equal
	// wants both): asking for them first (through the messages'
	// reflection) cost more than the comparison of most values.
	eq, ok = identicalKnown(a, b)
	if eq && ok && (hasUnknown(a) || hasUnknown(b)) {
		return false, false
	}
	return eq, ok
}

// identicalKnown is identical for a and b (neither nil) but for their own
// unknown fields.
func identicalKnown(a, b *pb.Value) (eq, ok bool) {
	switch x := a.ValueType.(type) {
	case nil:
		return b.ValueType == nil, true
	case *pb.Value_NullValue:
		y, same := b.ValueType.(*pb.Value_NullValue)
		return same && x.NullValue == y.NullValue, true
	case *pb.Value_BooleanValue:
		y, same := b.ValueType.(*pb.Value_BooleanValue)
		return same && x.BooleanValue == y.BooleanValue, true
	case *pb.Value_IntegerValue:
		y, same := b.ValueType.(*pb.Value_IntegerValue)
		return same && x.IntegerValue == y.IntegerValue, true
	case *pb.Value_DoubleValue:
		y, same := b.ValueType.(*pb.Value_DoubleValue)
		return same && sameFloat(x.DoubleValue, y.DoubleValue), true
	case *pb.Value_StringValue:
		y, same := b.ValueType.(*pb.Value_StringValue)
		return same && x.StringValue == y.StringValue, true
	case *pb.Value_ReferenceValue:
		y, same := b.ValueType.(*pb.Value_ReferenceValue)
		return same && x.ReferenceValue == y.ReferenceValue, true
	case *pb.Value_BytesValue:
		y, same := b.ValueType.(*pb.Value_BytesValue)
		return same && bytes.Equal(x.BytesValue, y.BytesValue), true
	case *pb.Value_TimestampValue:
		y, same := b.ValueType.(*pb.Value_TimestampValue)
		if !same {
			return false, true
		}
		s, t := x.TimestampValue, y.TimestampValue
		if s == nil || t == nil {
			return false, false
		}
		if s.Seconds != t.Seconds || s.Nanos != t.Nanos {
			return false, true
		}
		return true, !hasUnknown(s) && !hasUnknown(t)
	case *pb.Value_GeoPointValue:
		y, same := b.ValueType.(*pb.Value_GeoPointValue)
		if !same {
			return false, true
		}
		s, t := x.GeoPointValue, y.GeoPointValue
		if s == nil || t == nil {
			return false, false
		}
		if !sameFloat(s.Latitude, t.Latitude) || !sameFloat(s.Longitude, t.Longitude) {
			return false, true
		}
		return true, !hasUnknown(s) && !hasUnknown(t)
	case *pb.Value_ArrayValue:
		y, same := b.ValueType.(*pb.Value_ArrayValue)
		if !same {
			return false, true
		}
		s, t := x.ArrayValue, y.ArrayValue
		if s == nil || t == nil || hasUnknown(s) || hasUnknown(t) {
			return false, false
		}
		if len(s.Values) != len(t.Values) {
			return false, true
		}
		for i := range s.Values {
			if eq, ok := identical(s.Values[i], t.Values[i]); !ok || !eq {
				return eq, ok
			}
		}
		return true, true
	case *pb.Value_MapValue:
		y, same := b.ValueType.(*pb.Value_MapValue)
		if !same {
			return false, true
		}
		s, t := x.MapValue, y.MapValue
		if s == nil || t == nil || hasUnknown(s) || hasUnknown(t) {
			return false, false
		}
		return identicalFields(s.Fields, t.Fields)
	}
	return false, false
}

// sameFloat is proto.Equal's float equality: NaN equals NaN.
func sameFloat(x, y float64) bool {
	if math.IsNaN(x) || math.IsNaN(y) {
		return math.IsNaN(x) && math.IsNaN(y)
	}
	return x == y
}

// CloneFields is a deep copy of fields, each value as proto.Clone copies
// it.
func CloneFields(m map[string]*pb.Value) map[string]*pb.Value {
	out := make(map[string]*pb.Value, len(m))
	for k, v := range m {
		out[k] = Clone(v)
	}
	return out
}

// Clone is proto.Clone(v) for a value. A scalar's Value, its oneof
// wrapper (and a timestamp's Timestamp) are made as one allocation: they
// live and die together, and every write clones each field it sends.
func Clone(v *pb.Value) *pb.Value {
	if v == nil {
		return nil
	}
	if hasUnknown(v) {
		return proto.Clone(v).(*pb.Value)
	}
	switch x := v.ValueType.(type) {
	case nil:
		return &pb.Value{}
	case *pb.Value_NullValue:
		b := &struct {
			v pb.Value
			x pb.Value_NullValue
		}{x: pb.Value_NullValue{NullValue: x.NullValue}}
		b.v.ValueType = &b.x
		return &b.v
	case *pb.Value_BooleanValue:
		b := &struct {
			v pb.Value
			x pb.Value_BooleanValue
		}{x: pb.Value_BooleanValue{BooleanValue: x.BooleanValue}}
		b.v.ValueType = &b.x
		return &b.v
	case *pb.Value_IntegerValue:
		b := &struct {
			v pb.Value
			x pb.Value_IntegerValue
		}{x: pb.Value_IntegerValue{IntegerValue: x.IntegerValue}}
		b.v.ValueType = &b.x
		return &b.v
	case *pb.Value_DoubleValue:
		b := &struct {
			v pb.Value
			x pb.Value_DoubleValue
		}{x: pb.Value_DoubleValue{DoubleValue: x.DoubleValue}}
		b.v.ValueType = &b.x
		return &b.v
	case *pb.Value_StringValue:
		b := &struct {
			v pb.Value
			x pb.Value_StringValue
		}{x: pb.Value_StringValue{StringValue: x.StringValue}}
		b.v.ValueType = &b.x
		return &b.v
	case *pb.Value_ReferenceValue:
		b := &struct {
			v pb.Value
			x pb.Value_ReferenceValue
		}{x: pb.Value_ReferenceValue{ReferenceValue: x.ReferenceValue}}
		b.v.ValueType = &b.x
		return &b.v
	case *pb.Value_TimestampValue:
		if t := x.TimestampValue; t != nil && !hasUnknown(t) {
			b := &struct {
				v pb.Value
				x pb.Value_TimestampValue
				t timestamppb.Timestamp
			}{}
			b.t.Seconds, b.t.Nanos = t.Seconds, t.Nanos
			b.x.TimestampValue = &b.t
			b.v.ValueType = &b.x
			return &b.v
		}
	case *pb.Value_GeoPointValue:
		if g := x.GeoPointValue; g != nil && !hasUnknown(g) {
			return &pb.Value{ValueType: &pb.Value_GeoPointValue{GeoPointValue: &latlng.LatLng{Latitude: g.Latitude, Longitude: g.Longitude}}}
		}
	case *pb.Value_ArrayValue:
		if a := x.ArrayValue; a != nil && !hasUnknown(a) && !slices.Contains(a.Values, nil) {
			var vs []*pb.Value
			if a.Values != nil {
				vs = make([]*pb.Value, len(a.Values))
				for i, e := range a.Values {
					vs[i] = Clone(e)
				}
			}
			return &pb.Value{ValueType: &pb.Value_ArrayValue{ArrayValue: &pb.ArrayValue{Values: vs}}}
		}
	case *pb.Value_MapValue:
		if m := x.MapValue; m != nil && !hasUnknown(m) {
			var fs map[string]*pb.Value
			if m.Fields != nil {
				fs = make(map[string]*pb.Value, len(m.Fields))
				for k, e := range m.Fields {
					if e == nil {
						return proto.Clone(v).(*pb.Value)
					}
					fs[k] = Clone(e)
				}
			}
			return &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: fs}}}
		}
	}
	return proto.Clone(v).(*pb.Value)
}

// SameTime is proto.Equal for two timestamps (a document's update times:
// which version a transaction read, whether a write changed anything).
func SameTime(a, b *timestamppb.Timestamp) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if a == b {
		return true
	}
	if a.Seconds != b.Seconds || a.Nanos != b.Nanos {
		return false // whatever unknown fields they carry
	}
	if hasUnknown(a) || hasUnknown(b) {
		return proto.Equal(a, b)
	}
	return true
}
