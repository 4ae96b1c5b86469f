package fsvalue

import (
	"bytes"
	"maps"
	"math"
	"math/rand/v2"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/genproto/googleapis/type/latlng"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// randValue is a random value from a small alphabet, so that two of them
// are often equal, with the corner cases of proto.Equal: NaN, -0, empty
// and nil containers, unknown fields, nil messages in set oneofs.
func randValue(r *rand.Rand, depth int) *pb.Value {
	switch k := r.IntN(16); {
	case k == 0:
		return &pb.Value{}
	case k == 1:
		return &pb.Value{ValueType: &pb.Value_NullValue{}}
	case k == 2:
		return &pb.Value{ValueType: &pb.Value_BooleanValue{BooleanValue: r.IntN(2) == 0}}
	case k == 3:
		return &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: int64(r.IntN(3))}}
	case k == 4:
		return &pb.Value{ValueType: &pb.Value_DoubleValue{DoubleValue: []float64{0, math.Copysign(0, -1), 1, math.NaN(), math.Inf(1)}[r.IntN(5)]}}
	case k == 5:
		return &pb.Value{ValueType: &pb.Value_StringValue{StringValue: []string{"", "a", "b"}[r.IntN(3)]}}
	case k == 6:
		return &pb.Value{ValueType: &pb.Value_ReferenceValue{ReferenceValue: []string{"a", "b"}[r.IntN(2)]}}
	case k == 7:
		return &pb.Value{ValueType: &pb.Value_BytesValue{BytesValue: [][]byte{nil, {}, {1}}[r.IntN(3)]}}
	case k == 8:
		if r.IntN(8) == 0 {
			return &pb.Value{ValueType: &pb.Value_TimestampValue{}}
		}
		return &pb.Value{ValueType: &pb.Value_TimestampValue{TimestampValue: &timestamppb.Timestamp{Seconds: int64(r.IntN(2)), Nanos: int32(r.IntN(2))}}}
	case k == 9:
		return &pb.Value{ValueType: &pb.Value_GeoPointValue{GeoPointValue: &latlng.LatLng{Latitude: float64(r.IntN(2)), Longitude: math.NaN()}}}
	case k == 10:
		v := randValue(r, depth)
		v.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), uint64(r.IntN(2))))
		return v
	case k <= 12 && depth < 3:
		var vs []*pb.Value
		for range r.IntN(3) {
			vs = append(vs, randValue(r, depth+1))
		}
		if vs == nil && r.IntN(2) == 0 {
			vs = []*pb.Value{}
		}
		return &pb.Value{ValueType: &pb.Value_ArrayValue{ArrayValue: &pb.ArrayValue{Values: vs}}}
	case depth < 3:
		return &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: randFields(r, depth+1)}}}
	}
	return &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: 1}}
}

func randFields(r *rand.Rand, depth int) map[string]*pb.Value {
	if r.IntN(6) == 0 {
		return nil
	}
	m := map[string]*pb.Value{}
	for range r.IntN(3) {
		m[[]string{"a", "b", "c"}[r.IntN(3)]] = randValue(r, depth)
	}
	return m
}

// IdenticalFields and CloneFields answer what proto.Equal and proto.Clone
// answer, over random documents that are often alike.
func TestIdenticalFieldsAndCloneAreTheProtoPackages(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 2))
	equal := 0
	for i := range 20000 {
		a, b := randFields(r, 1), randFields(r, 1)
		want := proto.Equal(&pb.MapValue{Fields: a}, &pb.MapValue{Fields: b})
		if got := IdenticalFields(a, b); got != want {
			t.Fatalf("case %d: IdenticalFields = %v, proto.Equal = %v\na %v\nb %v", i, got, want, a, b)
		}
		// Values shared by both sides (a stored document's fields and a
		// write's): the same answer, NaN and unknown fields included.
		shared := map[string]*pb.Value{}
		maps.Copy(shared, b)
		for k, v := range a {
			if r.IntN(2) == 0 {
				shared[k] = v
			}
		}
		if got, want := IdenticalFields(a, shared), proto.Equal(&pb.MapValue{Fields: a}, &pb.MapValue{Fields: shared}); got != want {
			t.Fatalf("case %d: IdenticalFields (shared values) = %v, proto.Equal = %v\na %v\nb %v", i, got, want, a, shared)
		}
		if want {
			equal++
		}
		c := CloneFields(a)
		if !proto.Equal(&pb.MapValue{Fields: a}, &pb.MapValue{Fields: c}) || !IdenticalFields(a, c) {
			t.Fatalf("case %d: the clone differs\na %v\nc %v", i, a, c)
		}
		for k, v := range a {
			if v != nil && c[k] == v {
				t.Fatalf("case %d: the clone shares field %q", i, k)
			}
		}
	}
	if equal < 1000 {
		t.Errorf("only %d of the pairs were equal: the test says little", equal)
	}
}

// A clone shares nothing with its original: changing the clone's nested
// values leaves the original as it was.
func TestCloneIsDeep(t *testing.T) {
	orig := &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: map[string]*pb.Value{
		"l":  {ValueType: &pb.Value_ArrayValue{ArrayValue: &pb.ArrayValue{Values: []*pb.Value{{ValueType: &pb.Value_IntegerValue{IntegerValue: 1}}}}}},
		"t":  {ValueType: &pb.Value_TimestampValue{TimestampValue: &timestamppb.Timestamp{Seconds: 5}}},
		"g":  {ValueType: &pb.Value_GeoPointValue{GeoPointValue: &latlng.LatLng{Latitude: 1}}},
		"by": {ValueType: &pb.Value_BytesValue{BytesValue: []byte{1}}},
	}}}}
	keep := proto.Clone(orig)
	c := Clone(orig)
	f := c.GetMapValue().Fields
	f["l"].GetArrayValue().Values[0].ValueType = &pb.Value_StringValue{StringValue: "x"}
	f["t"].GetTimestampValue().Seconds = 9
	f["g"].GetGeoPointValue().Latitude = 9
	f["by"].GetBytesValue()[0] = 9
	f["new"] = &pb.Value{}
	if !proto.Equal(orig, keep) {
		t.Errorf("changing the clone changed the original: %v", orig)
	}
}

func BenchmarkIdenticalFields(b *testing.B) {
	doc := map[string]*pb.Value{"i": {ValueType: &pb.Value_IntegerValue{IntegerValue: 7}}, "g": {ValueType: &pb.Value_IntegerValue{IntegerValue: 7}}, "s": {ValueType: &pb.Value_StringValue{StringValue: "x"}}}
	c := CloneFields(doc)
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			IdenticalFields(doc, c)
		}
	})
	b.Run("proto.Equal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			proto.Equal(&pb.MapValue{Fields: doc}, &pb.MapValue{Fields: c})
		}
	})
	b.Run("clone", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			CloneFields(doc)
		}
	})
	b.Run("proto.Clone", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out := make(map[string]*pb.Value, len(doc))
			for k, v := range doc {
				out[k] = proto.Clone(v).(*pb.Value)
			}
		}
	})
}

func TestSameTimeIsProtoEqual(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 3))
	ts := func() *timestamppb.Timestamp {
		switch r.IntN(5) {
		case 0:
			return nil
		case 1:
			t := &timestamppb.Timestamp{Seconds: int64(r.IntN(2))}
			t.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 9, protowire.VarintType), uint64(r.IntN(2))))
			return t
		}
		return &timestamppb.Timestamp{Seconds: int64(r.IntN(2)), Nanos: int32(r.IntN(2))}
	}
	for i := range 2000 {
		a, b := ts(), ts()
		if got, want := SameTime(a, b), proto.Equal(a, b); got != want {
			t.Fatalf("case %d: SameTime(%v, %v) = %v, proto.Equal = %v", i, a, b, got, want)
		}
		if got, want := SameTime(a, a), proto.Equal(a, a); got != want {
			t.Fatalf("case %d: SameTime(%v, itself) = %v, proto.Equal = %v", i, a, got, want)
		}
	}
}

// Clone makes each scalar's Value and its parts as one allocation: the
// clone must still be the message proto.Clone makes, through proto's
// reflection (equality, encoding) as through its getters.
func TestCloneScalarsAreProtoClones(t *testing.T) {
	for _, v := range []*pb.Value{
		{ValueType: &pb.Value_NullValue{}},
		{ValueType: &pb.Value_BooleanValue{BooleanValue: true}},
		{ValueType: &pb.Value_IntegerValue{IntegerValue: -7}},
		{ValueType: &pb.Value_DoubleValue{DoubleValue: 2.5}},
		{ValueType: &pb.Value_StringValue{StringValue: "x"}},
		{ValueType: &pb.Value_ReferenceValue{ReferenceValue: "projects/p/databases/(default)/documents/c/d"}},
		{ValueType: &pb.Value_TimestampValue{TimestampValue: &timestamppb.Timestamp{Seconds: 5, Nanos: 6}}},
	} {
		c := Clone(v)
		if !proto.Equal(c, proto.Clone(v)) {
			t.Errorf("Clone(%v) = %v", v, c)
		}
		a, err1 := proto.MarshalOptions{Deterministic: true}.Marshal(c)
		b, err2 := proto.MarshalOptions{Deterministic: true}.Marshal(v)
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("Clone(%v) encodes as %x, want %x (%v, %v)", v, a, b, err1, err2)
		}
		if n := testing.AllocsPerRun(10, func() { Clone(v) }); n != 1 {
			t.Errorf("Clone(%v) made %v allocations, want 1", v, n)
		}
	}
}
