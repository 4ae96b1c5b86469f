package firestoreserver_test

import (
	"context"
	"fmt"
	"io"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/server/firestore/fstest"
)

// benchDurable serves a durable backend (pyric serve's store, without
// session capture) holding e2e/bench's 500 documents {i, g: i%10, s} in
// collection bench, and returns a client as admin and the database.
func benchDurable(b *testing.B) (pb.FirestoreClient, string) {
	b.Helper()
	s := fstest.Start(b, fstest.Options{Project: "demo-bench", DataDir: b.TempDir()})
	fc := pb.NewFirestoreClient(s.Conn(b, fstest.Owner))
	db := "projects/demo-bench/databases/(default)"
	for i := range 500 {
		if _, err := fc.Commit(context.Background(), &pb.CommitRequest{Database: db, Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{
			Name: fmt.Sprintf("%s/documents/bench/d%05d", db, i), Fields: map[string]*pb.Value{
				"i": {ValueType: &pb.Value_IntegerValue{IntegerValue: int64(i)}},
				"g": {ValueType: &pb.Value_IntegerValue{IntegerValue: int64(i % 10)}},
				"s": {ValueType: &pb.Value_StringValue{StringValue: "x"}},
			}}}}}}); err != nil {
			b.Fatal(err)
		}
	}
	return fc, db
}

// BenchmarkRPCSetDurable is e2e/bench's set against pyric serve's durable
// store: a Commit of one small document, outside a transaction, every one
// written to the store's log before it is acknowledged.
func BenchmarkRPCSetDurable(b *testing.B) {
	fc, db := benchDurable(b)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := fc.Commit(ctx, &pb.CommitRequest{Database: db, Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{
			Name: fmt.Sprintf("%s/documents/bench/d%05d", db, i%500), Fields: map[string]*pb.Value{
				"i": {ValueType: &pb.Value_IntegerValue{IntegerValue: int64(i)}},
				"g": {ValueType: &pb.Value_IntegerValue{IntegerValue: int64(i % 10)}},
				"s": {ValueType: &pb.Value_StringValue{StringValue: "x"}},
			}}}}}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRPCGetDurable is e2e/bench's get against pyric serve's durable
// store, client and server in this process: compare its allocations and
// its profile's shares (the time is the machine's).
func BenchmarkRPCGetDurable(b *testing.B) {
	fc, db := benchDurable(b)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		st, err := fc.BatchGetDocuments(ctx, &pb.BatchGetDocumentsRequest{Database: db,
			Documents: []string{fmt.Sprintf("%s/documents/bench/d%05d", db, i%500)}})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			r, err := st.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if r.GetFound() == nil {
				b.Fatal("not found")
			}
			n++
		}
		if n != 1 {
			b.Fatalf("%d responses", n)
		}
	}
}

// BenchmarkRPCQueryDurable is e2e/bench's query (where g == k: 50 of the
// 500 documents) against pyric serve's durable store.
func BenchmarkRPCQueryDurable(b *testing.B) {
	fc, db := benchDurable(b)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		st, err := fc.RunQuery(ctx, &pb.RunQueryRequest{Parent: db + "/documents", QueryType: &pb.RunQueryRequest_StructuredQuery{StructuredQuery: &pb.StructuredQuery{
			From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "bench"}},
			Where: &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_FieldFilter{FieldFilter: &pb.StructuredQuery_FieldFilter{
				Field: &pb.StructuredQuery_FieldReference{FieldPath: "g"}, Op: pb.StructuredQuery_FieldFilter_EQUAL,
				Value: &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: int64(i % 10)}}}}}}}})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			r, err := st.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if r.Document != nil {
				n++
			}
		}
		if n != 50 {
			b.Fatalf("%d documents", n)
		}
	}
}

// BenchmarkRPCTxnDurable is e2e/bench's txn against pyric serve's durable
// store: what the Go client's RunTransaction sends for a get and an
// update of one document — BeginTransaction, BatchGetDocuments in the
// transaction, and Commit of an update (an exists precondition and a
// field mask) in it.
func BenchmarkRPCTxnDurable(b *testing.B) {
	fc, db := benchDurable(b)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		name := fmt.Sprintf("%s/documents/bench/d%05d", db, i%500)
		bt, err := fc.BeginTransaction(ctx, &pb.BeginTransactionRequest{Database: db})
		if err != nil {
			b.Fatal(err)
		}
		st, err := fc.BatchGetDocuments(ctx, &pb.BatchGetDocumentsRequest{Database: db, Documents: []string{name},
			ConsistencySelector: &pb.BatchGetDocumentsRequest_Transaction{Transaction: bt.Transaction}})
		if err != nil {
			b.Fatal(err)
		}
		var found *pb.Document
		for {
			r, err := st.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			found = r.GetFound()
		}
		if found == nil {
			b.Fatal("not found")
		}
		if _, err := fc.Commit(ctx, &pb.CommitRequest{Database: db, Transaction: bt.Transaction, Writes: []*pb.Write{{
			Operation: &pb.Write_Update{Update: &pb.Document{Name: name, Fields: map[string]*pb.Value{
				"i": {ValueType: &pb.Value_IntegerValue{IntegerValue: int64(i)}}}}},
			UpdateMask:      &pb.DocumentMask{FieldPaths: []string{"i"}},
			CurrentDocument: &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: true}},
		}}}); err != nil {
			b.Fatal(err)
		}
	}
}
