package fsvalue

import (
	"math"
	"slices"
	"unicode/utf8"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// AppendDocument appends d's deterministic protobuf encoding to b: the
// bytes proto.MarshalOptions{Deterministic: true} appends (map entries by
// key), written directly for the types documents are made of. It is the
// encoding every durable write stores, and the proto package's walks the
// maps by reflection and sorts reflected keys; a document with unknown
// fields, nil messages in set oneofs, invalid UTF-8 (an error) or
// pipeline values goes through the proto package.
func AppendDocument(b []byte, d *pb.Document) ([]byte, error) {
	e := docEncoder{b: b}
	e.document(d)
	if e.fallback {
		return proto.MarshalOptions{Deterministic: true}.MarshalAppend(b, d)
	}
	return e.b, nil
}

type docEncoder struct {
	b        []byte
	fallback bool
}

func (e *docEncoder) document(d *pb.Document) {
	if d == nil {
		return
	}
	if hasUnknown(d) {
		e.fallback = true
		return
	}
	e.str(1, d.Name)
	e.fields(2, d.Fields)
	e.timestamp(3, d.CreateTime)
	e.timestamp(4, d.UpdateTime)
}

// str writes a proto3 string field (nothing when empty).
func (e *docEncoder) str(num protowire.Number, s string) {
	if s == "" {
		return
	}
	e.oneofStr(num, s)
}

// oneofStr writes a string field even when empty (a set oneof).
func (e *docEncoder) oneofStr(num protowire.Number, s string) {
	if !utf8.ValidString(s) {
		e.fallback = true // the proto package's error
		return
	}
	e.b = protowire.AppendTag(e.b, num, protowire.BytesType)
	e.b = protowire.AppendString(e.b, s)
}

// open starts a length-delimited field whose length is written by close,
// once known: one byte is kept for it, and the content moved when the
// length needs more.
func (e *docEncoder) open(num protowire.Number) int {
	e.b = protowire.AppendTag(e.b, num, protowire.BytesType)
	e.b = append(e.b, 0)
	return len(e.b)
}

func (e *docEncoder) close(start int) {
	n := len(e.b) - start
	if n < 0x80 {
		e.b[start-1] = byte(n)
		return
	}
	size := protowire.SizeVarint(uint64(n))
	e.b = append(e.b, make([]byte, size-1)...)
	copy(e.b[start-1+size:], e.b[start:start+n])
	protowire.AppendVarint(e.b[:start-1], uint64(n))
}

func (e *docEncoder) timestamp(num protowire.Number, t *timestamppb.Timestamp) {
	if t == nil {
		return
	}
	if hasUnknown(t) {
		e.fallback = true
		return
	}
	at := e.open(num)
	e.timestampBody(t)
	e.close(at)
}

func (e *docEncoder) timestampBody(t *timestamppb.Timestamp) {
	if t.Seconds != 0 {
		e.b = protowire.AppendTag(e.b, 1, protowire.VarintType)
		e.b = protowire.AppendVarint(e.b, uint64(t.Seconds))
	}
	if t.Nanos != 0 {
		e.b = protowire.AppendTag(e.b, 2, protowire.VarintType)
		e.b = protowire.AppendVarint(e.b, uint64(int64(t.Nanos)))
	}
}

// fields writes a map<string, Value> field, entries by key.
func (e *docEncoder) fields(num protowire.Number, m map[string]*pb.Value) {
	if len(m) == 0 {
		return
	}
	var small [16]string
	keys := small[:0]
	if len(m) > len(small) {
		keys = make([]string, 0, len(m))
	}
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := m[k]
		if v == nil {
			e.fallback = true
			return
		}
		entry := e.open(num)
		e.oneofStr(1, k)
		at := e.open(2)
		e.value(v)
		e.close(at)
		e.close(entry)
		if e.fallback {
			return
		}
	}
}

// value writes v's fields (its one set oneof).
func (e *docEncoder) value(v *pb.Value) {
	if hasUnknown(v) {
		e.fallback = true
		return
	}
	switch x := v.ValueType.(type) {
	case nil:
	case *pb.Value_NullValue:
		e.b = protowire.AppendTag(e.b, 11, protowire.VarintType)
		e.b = protowire.AppendVarint(e.b, uint64(int64(x.NullValue)))
	case *pb.Value_BooleanValue:
		e.b = protowire.AppendTag(e.b, 1, protowire.VarintType)
		e.b = protowire.AppendVarint(e.b, protowire.EncodeBool(x.BooleanValue))
	case *pb.Value_IntegerValue:
		e.b = protowire.AppendTag(e.b, 2, protowire.VarintType)
		e.b = protowire.AppendVarint(e.b, uint64(x.IntegerValue))
	case *pb.Value_DoubleValue:
		e.b = protowire.AppendTag(e.b, 3, protowire.Fixed64Type)
		e.b = protowire.AppendFixed64(e.b, math.Float64bits(x.DoubleValue))
	case *pb.Value_StringValue:
		e.oneofStr(17, x.StringValue)
	case *pb.Value_ReferenceValue:
		e.oneofStr(5, x.ReferenceValue)
	case *pb.Value_BytesValue:
		e.b = protowire.AppendTag(e.b, 18, protowire.BytesType)
		e.b = protowire.AppendBytes(e.b, x.BytesValue)
	case *pb.Value_TimestampValue:
		t := x.TimestampValue
		if t == nil || hasUnknown(t) {
			e.fallback = true
			return
		}
		at := e.open(10)
		e.timestampBody(t)
		e.close(at)
	case *pb.Value_GeoPointValue:
		g := x.GeoPointValue
		if g == nil || hasUnknown(g) {
			e.fallback = true
			return
		}
		at := e.open(8)
		e.double(1, g.Latitude)
		e.double(2, g.Longitude)
		e.close(at)
	case *pb.Value_ArrayValue:
		a := x.ArrayValue
		if a == nil || hasUnknown(a) {
			e.fallback = true
			return
		}
		at := e.open(9)
		for _, el := range a.Values {
			if el == nil {
				e.fallback = true
				return
			}
			item := e.open(1)
			e.value(el)
			e.close(item)
			if e.fallback {
				return
			}
		}
		e.close(at)
	case *pb.Value_MapValue:
		m := x.MapValue
		if m == nil || hasUnknown(m) {
			e.fallback = true
			return
		}
		at := e.open(6)
		e.fields(1, m.Fields)
		e.close(at)
	default:
		e.fallback = true
	}
}

// double writes a proto3 double field: nothing for +0, -0 included.
func (e *docEncoder) double(num protowire.Number, f float64) {
	if f == 0 && !math.Signbit(f) {
		return
	}
	e.b = protowire.AppendTag(e.b, num, protowire.Fixed64Type)
	e.b = protowire.AppendFixed64(e.b, math.Float64bits(f))
}
