package firestoreserver_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/pyric/pyric/server"
	"github.com/pyric/pyric/server/firestore/fstest"
)

// fillHeavySlots takes every slot of the process's heavy-work gate with
// HTTP requests whose handlers wait until the returned release is called.
func fillHeavySlots(t *testing.T) (release func()) {
	t.Helper()
	unblock := make(chan struct{})
	hold := httptest.NewServer(server.Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		<-unblock
	}), nil))
	_, _, slots := server.HeavyWork()
	done := make(chan struct{}, slots)
	for range slots {
		go func() {
			defer func() { done <- struct{}{} }()
			resp, err := hold.Client().Post(hold.URL, "application/octet-stream", bytes.NewReader(make([]byte, server.HeavyBodyBytes+1)))
			if err == nil {
				resp.Body.Close()
			}
		}()
	}
	for {
		if admitted, _, _ := server.HeavyWork(); admitted == slots {
			break
		}
		time.Sleep(time.Millisecond)
	}
	return func() {
		close(unblock)
		for range slots {
			<-done
		}
		hold.Close()
	}
}

// waitQueued waits until n requests queue at the gate (the test hangs, and
// fails at its deadline, if they never do).
func waitQueued(n int) {
	for {
		if _, waiting, _ := server.HeavyWork(); waiting == n {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// heavyDocument is a document whose message passes server.HeavyBodyBytes:
// a list of 100,000 strings.
func heavyDocument(name string) *pb.Document {
	vals := make([]*pb.Value, 100_000)
	for i := range vals {
		vals[i] = &pb.Value{ValueType: &pb.Value_StringValue{StringValue: fmt.Sprintf("t%d", i)}}
	}
	return &pb.Document{Name: name, Fields: map[string]*pb.Value{
		"tags": {ValueType: &pb.Value_ArrayValue{ArrayValue: &pb.ArrayValue{Values: vals}}}}}
}

// TestGRPCHeavyMessagesWaitAtTheGate: a gRPC Commit, and a Write on the
// Write stream, carrying a document past server.HeavyBodyBytes queue at
// the process's heavy-work gate while its slots are taken, as a heavy
// HTTP body does, and are served once a slot comes back; a light Commit
// is served meanwhile.
func TestGRPCHeavyMessagesWaitAtTheGate(t *testing.T) {
	s := fstest.Start(t, fstest.Options{})
	fc := pb.NewFirestoreClient(s.Conn(t, fstest.Owner))
	ctx := context.Background()
	db := "projects/" + s.Project + "/databases/(default)"
	doc := db + "/documents/c/"
	release := fillHeavySlots(t)

	heavy := make(chan error, 1)
	go func() {
		_, err := fc.Commit(ctx, &pb.CommitRequest{Database: db, Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: heavyDocument(doc + "heavy")}}}})
		heavy <- err
	}()
	waitQueued(1)

	ws, err := fc.Write(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Send(&pb.WriteRequest{Database: db}); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Recv(); err != nil {
		t.Fatalf("write stream handshake: %v", err)
	}
	streamed := make(chan error, 1)
	go func() {
		if err := ws.Send(&pb.WriteRequest{Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: heavyDocument(doc + "streamed")}}}}); err != nil {
			streamed <- err
			return
		}
		_, err := ws.Recv()
		streamed <- err
	}()
	waitQueued(2)

	if _, err := fc.Commit(ctx, &pb.CommitRequest{Database: db, Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{Name: doc + "light"}}}}}); err != nil {
		t.Fatalf("a light commit while heavy ones queue: %v", err)
	}
	select {
	case err := <-heavy:
		t.Fatalf("the heavy commit was served while every slot was taken: %v", err)
	case err := <-streamed:
		t.Fatalf("the heavy streamed write was served while every slot was taken: %v", err)
	default:
	}
	release()
	if err := <-heavy; err != nil {
		t.Fatalf("heavy commit: %v", err)
	}
	if err := <-streamed; err != nil {
		t.Fatalf("heavy streamed write: %v", err)
	}
	got, err := fc.GetDocument(ctx, &pb.GetDocumentRequest{Name: doc + "heavy"})
	if err != nil || len(got.Fields["tags"].GetArrayValue().GetValues()) != 100_000 {
		t.Fatalf("the heavy document as stored: %v (%v)", status.Code(err), err)
	}
}

// TestGRPCQueuedHeavyCommitGivesUpWithItsClient: a heavy Commit whose
// client gives up while it queues ends (its client sees its own deadline)
// and leaves the queue.
func TestGRPCQueuedHeavyCommitGivesUpWithItsClient(t *testing.T) {
	s := fstest.Start(t, fstest.Options{})
	fc := pb.NewFirestoreClient(s.Conn(t, fstest.Owner))
	db := "projects/" + s.Project + "/databases/(default)"
	release := fillHeavySlots(t)
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := fc.Commit(ctx, &pb.CommitRequest{Database: db, Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: heavyDocument(db + "/documents/c/gone")}}}})
		errc <- err
	}()
	waitQueued(1)
	cancel()
	if err := <-errc; status.Code(err) != codes.Canceled {
		t.Fatalf("commit: %v, want CANCELED", err)
	}
	waitQueued(0) // the server's side left the queue too
}

// TestGRPCCommitPastTheRequestLimit: a gRPC Commit past Firestore's 10 MiB
// request limit (a heavy message, decoded after the gate) is refused with
// INVALID_ARGUMENT in production's words, and a light one beside it is
// committed: the transport tells the engine the size it read, and only a
// request it knows to be within the limit goes unsized.
func TestGRPCCommitPastTheRequestLimit(t *testing.T) {
	s := fstest.Start(t, fstest.Options{})
	fc := pb.NewFirestoreClient(s.Conn(t, fstest.Owner))
	ctx := context.Background()
	db := "projects/" + s.Project + "/databases/(default)"
	big := &pb.Document{Name: db + "/documents/c/big", Fields: map[string]*pb.Value{
		"s": {ValueType: &pb.Value_StringValue{StringValue: strings.Repeat("x", 900_000)}}}}
	var writes []*pb.Write
	for i := range 12 {
		d := proto.Clone(big).(*pb.Document)
		d.Name = fmt.Sprintf("%s/documents/c/big%d", db, i)
		writes = append(writes, &pb.Write{Operation: &pb.Write_Update{Update: d}})
	}
	_, err := fc.Commit(ctx, &pb.CommitRequest{Database: db, Writes: writes})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "Request payload size exceeds the limit") {
		t.Fatalf("Commit of %d bytes: %v, want INVALID_ARGUMENT: Request payload size exceeds the limit", proto.Size(&pb.CommitRequest{Database: db, Writes: writes}), err)
	}
	if _, err := fc.Commit(ctx, &pb.CommitRequest{Database: db, Writes: writes[:2]}); err != nil {
		t.Fatalf("Commit of two 900 kB documents: %v", err)
	}
	if _, err := fc.GetDocument(ctx, &pb.GetDocumentRequest{Name: db + "/documents/c/big2"}); status.Code(err) != codes.NotFound {
		t.Errorf("a document of the refused commit: %v, want NOT_FOUND", err)
	}
}
