package firestore

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/genproto/googleapis/type/latlng"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

var recordTestDB = DatabaseName{Project: "p", Database: "(default)"}

// randomRecordValue is a value of any type a document holds, nested up to
// depth levels, with the names and numbers MarshalFields treats specially.
func randomRecordValue(r *rand.Rand, depth int) *pb.Value {
	kinds := 12
	if depth <= 0 {
		kinds = 9 // no arrays, maps or vectors
	}
	switch r.IntN(kinds) {
	case 0:
		return &pb.Value{ValueType: &pb.Value_NullValue{NullValue: structpb.NullValue_NULL_VALUE}}
	case 1:
		return &pb.Value{ValueType: &pb.Value_BooleanValue{BooleanValue: r.IntN(2) == 0}}
	case 2:
		ints := []int64{0, -1, 1, math.MaxInt64, math.MinInt64, r.Int64(), int64(r.IntN(1000))}
		return &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: ints[r.IntN(len(ints))]}}
	case 3:
		return &pb.Value{ValueType: &pb.Value_DoubleValue{DoubleValue: randomRecordFloat(r)}}
	case 4:
		return &pb.Value{ValueType: &pb.Value_TimestampValue{TimestampValue: &timestamppb.Timestamp{
			Seconds: r.Int64N(1<<40) - 1<<39, Nanos: r.Int32N(1e9)}}}
	case 5:
		return &pb.Value{ValueType: &pb.Value_StringValue{StringValue: randomRecordString(r)}}
	case 6:
		bs := make([]byte, r.IntN(20))
		for i := range bs {
			bs[i] = byte(r.IntN(256))
		}
		return &pb.Value{ValueType: &pb.Value_BytesValue{BytesValue: bs}}
	case 7:
		names := []string{
			"projects/p/databases/(default)/documents/c/d",
			"projects/p/databases/other/documents/c/d",
			"projects/q/databases/(default)/documents/c/<d>/e/é",
			"not a name",
		}
		return &pb.Value{ValueType: &pb.Value_ReferenceValue{ReferenceValue: names[r.IntN(len(names))]}}
	case 8:
		return &pb.Value{ValueType: &pb.Value_GeoPointValue{GeoPointValue: &latlng.LatLng{
			Latitude: randomRecordFloat(r), Longitude: randomRecordFloat(r)}}}
	case 9:
		vs := make([]*pb.Value, r.IntN(4))
		for i := range vs {
			vs[i] = randomRecordValue(r, depth-1)
		}
		return &pb.Value{ValueType: &pb.Value_ArrayValue{ArrayValue: &pb.ArrayValue{Values: vs}}}
	case 10:
		return &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: randomRecordFields(r, depth-1)}}}
	}
	elems := make([]*pb.Value, r.IntN(4))
	for i := range elems {
		elems[i] = &pb.Value{ValueType: &pb.Value_DoubleValue{DoubleValue: randomRecordFloat(r)}}
	}
	return &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: map[string]*pb.Value{
		"__type__": {ValueType: &pb.Value_StringValue{StringValue: "__vector__"}},
		"value":    {ValueType: &pb.Value_ArrayValue{ArrayValue: &pb.ArrayValue{Values: elems}}},
	}}}}
}

func randomRecordFloat(r *rand.Rand) float64 {
	fs := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 1.5, -2, 1e21, 1e-7,
		math.MaxFloat64, math.SmallestNonzeroFloat64, r.NormFloat64() * 1e6, float64(r.IntN(100))}
	return fs[r.IntN(len(fs))]
}

func randomRecordString(r *rand.Rand) string {
	ss := []string{"", "a", "some text", "<&>", `"q\"`, "é ünï", "\x00\x1f\t\n", "\u2028", "__type", "__type__",
		"value", "b", strconv.Itoa(r.IntN(100))}
	return ss[r.IntN(len(ss))]
}

func randomRecordFields(r *rand.Rand, depth int) map[string]*pb.Value {
	m := map[string]*pb.Value{}
	for range r.IntN(6) {
		k := randomRecordString(r)
		if r.IntN(8) == 0 && depth < 2 {
			k = "__type__" // not a vector: marked as a map
		}
		m[k] = randomRecordValue(r, depth)
	}
	return m
}

// storedRecordForm is a document's encoding as the store keeps it:
// without its name.
func storedRecordForm(t testing.TB, d *pb.Document) []byte {
	t.Helper()
	d = proto.Clone(d).(*pb.Document)
	d.Name = ""
	raw, err := proto.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// hasTypeField reports whether fields hold a map (at any depth below
// them) with a "__type__" field, which the encoder leaves to the decoding
// path.
func hasTypeField(fields map[string]*pb.Value) bool {
	for _, v := range fields {
		if hasTypeFieldValue(v) {
			return true
		}
	}
	return false
}

func hasTypeFieldValue(v *pb.Value) bool {
	switch x := v.GetValueType().(type) {
	case *pb.Value_MapValue:
		if _, ok := x.MapValue.GetFields()["__type__"]; ok {
			return true
		}
		return hasTypeField(x.MapValue.GetFields())
	case *pb.Value_ArrayValue:
		for _, e := range x.ArrayValue.GetValues() {
			if hasTypeFieldValue(e) {
				return true
			}
		}
	}
	return false
}

// TestRecordEncoderMatchesMarshalFields compares the encoder, over random
// documents' stored encodings, with MarshalFields of the documents, byte
// for byte, with one encoder reused across them all (so a document that
// leaves bytes behind for the next shows).
func TestRecordEncoderMatchesMarshalFields(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var enc recordEncoder
	fast := 0
	for i := range 3000 {
		d := &pb.Document{
			Name:       "projects/p/databases/(default)/documents/c/d" + strconv.Itoa(i),
			Fields:     randomRecordFields(r, 4),
			CreateTime: timestamppb.Now(),
			UpdateTime: timestamppb.Now(),
		}
		// The stored form is what the records were written from: it
		// loses a geo point's -0, say.
		raw := storedRecordForm(t, d)
		if got, want := enc.document(raw, recordTestDB), decodedRecord(raw); !bytes.Equal(got, want) {
			t.Fatalf("document %d:\n got %s\nwant %s", i, got, want)
		}
		want := MarshalFields(d.Fields, recordTestDB)
		if got := enc.fields(d.Fields, recordTestDB); !bytes.Equal(got, want) {
			t.Fatalf("fields %d:\n got %s\nwant %s", i, got, want)
		}
		// The encoding itself, not the decoding path, wrote every document
		// but those with a "__type__" map.
		if _, ok := enc.appendDocument(nil, raw, recordTestDB); ok {
			fast++
		} else if !hasTypeField(d.Fields) {
			t.Fatalf("document %d took the decoding path: %s", i, want)
		}
	}
	if fast < 1000 {
		t.Fatalf("only %d of 3000 documents were written from their encoding", fast)
	}
}

// TestRecordEncoderOddEncodings covers encodings the engine does not
// write but proto.Unmarshal reads in its own way: a field twice, a map key
// twice, unknown fields, invalid UTF-8, a truncated encoding.
func TestRecordEncoderOddEncodings(t *testing.T) {
	// str is a document {a: s}, encoded by hand: proto.Marshal refuses
	// invalid UTF-8.
	str := func(s string) []byte {
		v := protowire.AppendTag(nil, 17, protowire.BytesType)
		v = protowire.AppendString(v, s)
		ent := protowire.AppendTag(nil, 1, protowire.BytesType)
		ent = protowire.AppendString(ent, "a")
		ent = protowire.AppendTag(ent, 2, protowire.BytesType)
		ent = protowire.AppendBytes(ent, v)
		return protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), ent)
	}
	intDoc := storedRecordForm(t, &pb.Document{Fields: map[string]*pb.Value{"a": {ValueType: &pb.Value_IntegerValue{IntegerValue: 7}}}})
	mapDoc := storedRecordForm(t, &pb.Document{Fields: map[string]*pb.Value{"m": {ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{
		Fields: map[string]*pb.Value{"x": {ValueType: &pb.Value_TimestampValue{TimestampValue: &timestamppb.Timestamp{Seconds: 5}}}}}}}}})
	cases := map[string][]byte{
		"empty":              nil,
		"key twice":          append(append([]byte{}, str("x")...), str("y")...),
		"field twice":        append(append([]byte{}, intDoc...), str("y")...),
		"map merged":         append(append([]byte{}, mapDoc...), mapDoc...),
		"unknown field":      append([]byte{0x78, 0x05}, intDoc...),
		"invalid utf-8":      str("\xff"),
		"truncated":          intDoc[:len(intDoc)-1],
		"wrong wire type":    {0x10, 0x01},
		"name only":          {0x0a, 0x01, 'n'},
		"invalid utf-8 name": {0x0a, 0x01, 0xff},
	}
	var enc recordEncoder
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			if got, want := enc.document(raw, recordTestDB), decodedRecord(raw); !bytes.Equal(got, want) {
				t.Fatalf("got %s, want %s", got, want)
			}
		})
	}
}

// decodedRecord is what a document's record was before the encoder: the
// stored encoding decoded as the store decodes it, and MarshalFields.
func decodedRecord(raw []byte) []byte {
	d := &pb.Document{}
	if err := proto.Unmarshal(raw, d); err != nil {
		d.Fields = nil
	}
	return MarshalFields(d.Fields, recordTestDB)
}

// FuzzRecordEncoder compares the encoder with decoding and MarshalFields
// on any bytes as a stored encoding.
func FuzzRecordEncoder(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		f.Add(storedRecordForm(f, &pb.Document{Fields: randomRecordFields(r, 3)}))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var enc recordEncoder
		if got, want := enc.document(raw, recordTestDB), decodedRecord(raw); !bytes.Equal(got, want) {
			t.Fatalf("got %s, want %s", got, want)
		}
	})
}
