package firestoreserver

import (
	"bytes"
	"strings"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/proto"
)

// TestLenientCodec: a request that cannot be decoded is recorded with a
// message naming the problem, and the interceptor check answers it.
func TestLenientCodec(t *testing.T) {
	good := &pb.CommitRequest{Database: "projects/p/databases/(default)", Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{
		Name: "projects/p/databases/(default)/documents/a/b", Fields: map[string]*pb.Value{"s": {ValueType: &pb.Value_StringValue{StringValue: "XXXX"}}}}}}}}
	b, _ := proto.Marshal(good)
	var c lenientCodec
	m := &pb.CommitRequest{}
	if err := c.Unmarshal(b, m); err != nil || takeDecodeError(m) != nil || !proto.Equal(m, good) {
		t.Fatalf("good request: %v", err)
	}
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"bad UTF-8 string value", bytes.Replace(b, []byte("XXXX"), []byte{0xff, 0xfe, 0xfd, 0xfc}, 1), `writes[0].update.fields["s"].string_value`},
		{"garbage", []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}, "CommitRequest"},
	}
	for _, tc := range cases {
		m := &pb.CommitRequest{}
		if err := c.Unmarshal(tc.b, m); err != nil {
			t.Errorf("%s: Unmarshal failed: %v", tc.name, err)
		}
		err := takeDecodeError(m)
		if Status(err).Code().String() != "InvalidArgument" || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want INVALID_ARGUMENT naming %s", tc.name, err, tc.want)
		}
		if takeDecodeError(m) != nil {
			t.Errorf("%s: the error is reported once", tc.name)
		}
	}
}

// FuzzDecodeError: describing a decode failure never panics, whatever the
// bytes.
func FuzzDecodeError(f *testing.F) {
	b, _ := proto.Marshal(&pb.CommitRequest{Database: "projects/p/databases/(default)", Writes: []*pb.Write{{Operation: &pb.Write_Delete{Delete: "x"}}}})
	f.Add(b)
	f.Add([]byte{0x0a, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		m := &pb.CommitRequest{}
		if err := (lenientCodec{}).Unmarshal(data, m); err != nil {
			t.Fatal(err)
		}
		_ = takeDecodeError(m)
	})
}
