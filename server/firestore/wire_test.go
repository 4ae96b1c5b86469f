package firestoreserver_test

import (
	"context"
	"fmt"
	"io"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/server/firestore/fstest"
)

// A durable database's documents go out over gRPC in the encoding its
// store keeps (written by a commit, or read back from the data dir at
// start): BatchGetDocuments and RunQuery answer them equal to what the
// engine reads, a field mask's projection too.
func TestGRPCReadsSendKeptEncodings(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	db := "projects/demo-wire/databases/(default)"
	docs := db + "/documents/w/"
	var names []string
	check := func(s *fstest.Server) {
		t.Helper()
		fc := pb.NewFirestoreClient(s.Conn(t, fstest.Owner))
		eng, ok := sandbox.Lookup[*firestore.Engine](s.Sandbox)
		if !ok {
			t.Fatal("no engine")
		}
		for _, mask := range []*pb.DocumentMask{nil, {FieldPaths: []string{"m.s"}}} {
			req := &pb.BatchGetDocumentsRequest{Database: db, Documents: names, Mask: mask}
			want, err := eng.BatchGetDocuments(ctx, identity.AdminIdentity(), req)
			if err != nil {
				t.Fatal(err)
			}
			st, err := fc.BatchGetDocuments(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			var got []*pb.Document
			for {
				r, err := st.Recv()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, r.GetFound())
			}
			var wantDocs []*pb.Document
			for _, r := range want {
				wantDocs = append(wantDocs, r.GetFound())
			}
			if diff := cmp.Diff(wantDocs, got, protocmp.Transform()); diff != "" {
				t.Errorf("BatchGetDocuments (mask %v) (-engine +gRPC):\n%s", mask, diff)
			}
		}
		q := &pb.RunQueryRequest{Parent: db + "/documents", QueryType: &pb.RunQueryRequest_StructuredQuery{StructuredQuery: &pb.StructuredQuery{
			From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "w"}},
			Where: &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_FieldFilter{FieldFilter: &pb.StructuredQuery_FieldFilter{
				Field: &pb.StructuredQuery_FieldReference{FieldPath: "g"}, Op: pb.StructuredQuery_FieldFilter_EQUAL, Value: &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: 1}}}}}}}}
		want, err := eng.RunQuery(ctx, identity.AdminIdentity(), q)
		if err != nil {
			t.Fatal(err)
		}
		st, err := fc.RunQuery(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var got []*pb.Document
		for {
			r, err := st.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Document != nil {
				got = append(got, r.Document)
			}
		}
		var wantDocs []*pb.Document
		for _, r := range want {
			wantDocs = append(wantDocs, r.GetDocument())
		}
		if len(got) != 5 {
			t.Errorf("RunQuery: %d documents, want 5", len(got))
		}
		if diff := cmp.Diff(wantDocs, got, protocmp.Transform()); diff != "" {
			t.Errorf("RunQuery (-engine +gRPC):\n%s", diff)
		}
	}
	s := fstest.Start(t, fstest.Options{Project: "demo-wire", DataDir: dir})
	fc := pb.NewFirestoreClient(s.Conn(t, fstest.Owner))
	var writes []*pb.Write
	for i := range 10 {
		n := fmt.Sprintf("%sd%02d", docs, i)
		names = append(names, n)
		writes = append(writes, &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: n, Fields: map[string]*pb.Value{
			"g": {ValueType: &pb.Value_IntegerValue{IntegerValue: int64(i % 2)}},
			"s": {ValueType: &pb.Value_StringValue{StringValue: "é" + n}},
			"a": {ValueType: &pb.Value_ArrayValue{ArrayValue: &pb.ArrayValue{Values: []*pb.Value{{ValueType: &pb.Value_DoubleValue{DoubleValue: 1.5}}, {ValueType: &pb.Value_NullValue{}}}}}},
			"m": {ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: map[string]*pb.Value{"s": {ValueType: &pb.Value_BytesValue{BytesValue: []byte{0, 1}}}, "t": {ValueType: &pb.Value_BooleanValue{BooleanValue: true}}}}}},
		}}}})
	}
	names = append(names, docs+"missing")
	if _, err := fc.Commit(ctx, &pb.CommitRequest{Database: db, Writes: writes}); err != nil {
		t.Fatal(err)
	}
	check(s)
	s.Close()
	check(fstest.Start(t, fstest.Options{Project: "demo-wire", DataDir: dir}))
}
