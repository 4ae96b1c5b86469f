package fsvalue

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// AppendDocument writes what the proto package's deterministic marshal
// writes, over random documents (with long strings and big nested values,
// whose lengths take several bytes), and keeps what b held.
func TestAppendDocumentIsDeterministicMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 4))
	long := strings.Repeat("x", 200)
	direct := 0
	for i := range 5000 {
		d := &pb.Document{Fields: randFields(r, 1)}
		if r.IntN(2) == 0 {
			d.Name = "projects/p/databases/(default)/documents/c/d" + long[:r.IntN(200)]
			d.CreateTime = &timestamppb.Timestamp{Seconds: r.Int64N(1 << 40), Nanos: r.Int32N(1e9)}
			d.UpdateTime = &timestamppb.Timestamp{Seconds: -r.Int64N(1 << 40), Nanos: -r.Int32N(10)}
		}
		if r.IntN(3) == 0 {
			if d.Fields == nil {
				d.Fields = map[string]*pb.Value{}
			}
			d.Fields[long[:r.IntN(200)]] = &pb.Value{ValueType: &pb.Value_StringValue{StringValue: strings.Repeat("é", r.IntN(20000))}}
			d.Fields["m"] = &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: CloneFields(d.Fields)}}}
		}
		want, wantErr := proto.MarshalOptions{Deterministic: true}.Marshal(d)
		got, err := AppendDocument([]byte("head"), d)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("case %d: error %v, the proto package's %v", i, err, wantErr)
		}
		if err == nil && (!bytes.HasPrefix(got, []byte("head")) || !bytes.Equal(got[4:], want)) {
			t.Fatalf("case %d: encodings differ\n got %x\nwant %x", i, got[4:], want)
		}
		var e docEncoder
		if e.document(d); !e.fallback {
			direct++
		}
	}
	if direct < 1000 {
		t.Errorf("only %d of the documents were written directly: the test says little", direct)
	}
}

func TestAppendDocumentRefusesInvalidUTF8(t *testing.T) {
	d := &pb.Document{Fields: map[string]*pb.Value{"a": {ValueType: &pb.Value_StringValue{StringValue: "\xff"}}}}
	if _, err := AppendDocument(nil, d); err == nil {
		t.Errorf("a document with invalid UTF-8 encoded; the proto package refuses it")
	}
}

func BenchmarkAppendDocument(b *testing.B) {
	d := &pb.Document{Name: "projects/demo-bench/databases/(default)/documents/bench1796603142935619583/d07996",
		CreateTime: timestamppb.Now(), UpdateTime: timestamppb.Now(),
		Fields: map[string]*pb.Value{"i": {ValueType: &pb.Value_IntegerValue{IntegerValue: 7996}}, "g": {ValueType: &pb.Value_IntegerValue{IntegerValue: 6}}, "s": {ValueType: &pb.Value_StringValue{StringValue: "x"}}}}
	var buf []byte
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = AppendDocument(buf[:0], d)
		}
	})
	b.Run("proto", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = proto.MarshalOptions{Deterministic: true}.MarshalAppend(buf[:0], d)
		}
	})
}
