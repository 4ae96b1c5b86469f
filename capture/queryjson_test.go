package capture

import (
	"bytes"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// The memo's forms are protojson's, for a query seen again, for messages
// of other types with the same encoding, and past its bound.
func TestJSONMemoIsProtojson(t *testing.T) {
	j := jsonMemo{max: 3}
	query := func(coll string) *pb.StructuredQuery {
		return &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: coll}}}
	}
	msgs := []proto.Message{query("a"), query("b"), query("a"), &pb.StructuredQuery{}, &pb.Cursor{},
		query("c"), query("d"), query("a"), &pb.DocumentMask{FieldPaths: []string{"x"}}}
	for i, m := range msgs {
		want, err := protojson.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := j.of(m)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("message %d (%T): %s, want %s", i, m, got, want)
		}
		if len(j.forms) > j.max {
			t.Fatalf("the memo keeps %d forms, bound %d", len(j.forms), j.max)
		}
	}
}
