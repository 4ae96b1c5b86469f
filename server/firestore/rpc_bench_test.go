package firestoreserver

import (
	"context"
	"fmt"
	"io"
	"net"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/firestore"
)

// benchRPC serves an engine emitting to an event bus (as pyric serve's
// does) on a loopback gRPC port and returns a client as admin.
func benchRPC(b *testing.B) (pb.FirestoreClient, context.Context) {
	b.Helper()
	s := New(Options{Engine: firestore.New(firestore.Options{Events: event.NewBus(event.Options{})}), DefaultProject: "p"})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port, svc := NewPort(l, s)
	go port.Serve()
	conn, err := grpc.NewClient("passthrough:///"+l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		conn.Close()
		svc.Drain()
		port.Close()
	})
	return pb.NewFirestoreClient(conn), metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer owner")
}

const benchDocs = "projects/p/databases/(default)/documents/bench/"

func benchDoc(i int) *pb.Document {
	return &pb.Document{Name: fmt.Sprintf("%sd%05d", benchDocs, i), Fields: map[string]*pb.Value{
		"i": {ValueType: &pb.Value_IntegerValue{IntegerValue: int64(i)}},
		"g": {ValueType: &pb.Value_IntegerValue{IntegerValue: int64(i % 10)}},
		"s": {ValueType: &pb.Value_StringValue{StringValue: "x"}},
	}}
}

// BenchmarkRPCSet is e2e/bench's set over gRPC, client and server in
// this process: a Commit of one small document. Its allocations per
// operation are the ones to compare (the time is the machine's).
func BenchmarkRPCSet(b *testing.B) {
	c, ctx := benchRPC(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := c.Commit(ctx, &pb.CommitRequest{Database: "projects/p/databases/(default)",
			Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: benchDoc(i % 1000)}}}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRPCGet is e2e/bench's get over gRPC: a BatchGetDocuments of
// one small document, read to its end.
func BenchmarkRPCGet(b *testing.B) {
	c, ctx := benchRPC(b)
	for i := range 100 {
		if _, err := c.Commit(ctx, &pb.CommitRequest{Database: "projects/p/databases/(default)",
			Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: benchDoc(i)}}}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		st, err := c.BatchGetDocuments(ctx, &pb.BatchGetDocumentsRequest{Database: "projects/p/databases/(default)",
			Documents: []string{fmt.Sprintf("%sd%05d", benchDocs, i%100)}})
		if err != nil {
			b.Fatal(err)
		}
		for {
			r, err := st.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if r.GetFound() == nil {
				b.Fatalf("d%05d not found", i%100)
			}
		}
	}
}
