package firestoreserver_test

import (
	"context"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/pyric/pyric/server/firestore/fstest"
)

// A request without a database is INVALID_ARGUMENT in the official
// emulator's words, whatever the routing metadata names, on unary calls
// and on the Write and Listen streams alike.
func TestGRPCEmptyDatabase(t *testing.T) {
	t.Parallel()
	s := fstest.Start(t, fstest.Options{})
	fc := pb.NewFirestoreClient(s.Conn(t, fstest.Owner))
	ctx := metadata.AppendToOutgoingContext(context.Background(), "google-cloud-resource-prefix", "projects/meta/databases/(default)")
	const want = `Database name "" lacks "projects" at index 0.`
	check := func(what string, err error) {
		t.Helper()
		if status.Code(err) != codes.InvalidArgument || status.Convert(err).Message() != want {
			t.Errorf("%s: %v, want INVALID_ARGUMENT %q", what, err, want)
		}
	}
	_, err := fc.Commit(ctx, &pb.CommitRequest{Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{
		Name: "projects/meta/databases/(default)/documents/a/b"}}}}})
	check("Commit", err)
	_, err = fc.BeginTransaction(ctx, &pb.BeginTransactionRequest{})
	check("BeginTransaction", err)
	ws, err := fc.Write(metadata.AppendToOutgoingContext(context.Background(), "x-goog-request-params", "projects/meta/databases/(default)"))
	if err != nil {
		t.Fatal(err)
	}
	ws.Send(&pb.WriteRequest{})
	_, err = ws.Recv()
	check("Write", err)
	ls, err := fc.Listen(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ls.Send(&pb.ListenRequest{TargetChange: &pb.ListenRequest_AddTarget{AddTarget: &pb.Target{TargetId: 1,
		TargetType: &pb.Target_Documents{Documents: &pb.Target_DocumentsTarget{Documents: []string{"projects/meta/databases/(default)/documents/a/b"}}}}}})
	_, err = ls.Recv()
	check("Listen", err)
}

// Drain ends open Listen and Write streams with UNAVAILABLE at once (the
// clients' cue to reconnect) and refuses new ones.
func TestGRPCDrain(t *testing.T) {
	t.Parallel()
	s := fstest.Start(t, fstest.Options{})
	fc := pb.NewFirestoreClient(s.Conn(t, fstest.Owner))
	ctx := context.Background()
	db := "projects/" + s.Project + "/databases/(default)"
	ls, err := fc.Listen(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ls.Send(&pb.ListenRequest{Database: db, TargetChange: &pb.ListenRequest_AddTarget{AddTarget: &pb.Target{TargetId: 1,
		TargetType: &pb.Target_Documents{Documents: &pb.Target_DocumentsTarget{Documents: []string{db + "/documents/a/b"}}}}}})
	if _, err := ls.Recv(); err != nil {
		t.Fatal(err)
	}
	ws, _ := fc.Write(ctx)
	ws.Send(&pb.WriteRequest{Database: db})
	if _, err := ws.Recv(); err != nil {
		t.Fatal(err)
	}
	s.GRPC.Drain()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := ls.Recv()
		if err != nil {
			if status.Code(err) != codes.Unavailable {
				t.Errorf("listen after drain: %v", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("listen stream still open after drain")
		}
	}
	if _, err := ws.Recv(); status.Code(err) != codes.Unavailable {
		t.Errorf("write after drain: %v", err)
	}
	ls2, _ := fc.Listen(ctx)
	ls2.Send(&pb.ListenRequest{Database: db})
	if _, err := ls2.Recv(); status.Code(err) != codes.Unavailable {
		t.Errorf("new listen after drain: %v", err)
	}
}

// A malformed Authorization ends a stream before it starts.
func TestGRPCStreamsCheckIdentity(t *testing.T) {
	t.Parallel()
	s := fstest.Start(t, fstest.Options{})
	fc := pb.NewFirestoreClient(s.Conn(t, "garbage"))
	ls, err := fc.Listen(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ls.Recv(); status.Code(err) != codes.InvalidArgument {
		t.Errorf("listen with a malformed bearer: %v", err)
	}
	ws, _ := fc.Write(context.Background())
	if _, err := ws.Recv(); status.Code(err) != codes.InvalidArgument {
		t.Errorf("write with a malformed bearer: %v", err)
	}
}
