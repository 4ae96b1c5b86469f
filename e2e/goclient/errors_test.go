package goclient

import (
	"testing"
	"time"

	gcfirestore "cloud.google.com/go/firestore"
	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/server/firestore/fstest"
)

func TestErrorCodes(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client(t)
	ref := c.Doc("e/x")
	wr, err := ref.Create(bg, map[string]any{"n": 1})
	if err != nil {
		t.Fatal(err)
	}

	_, err = ref.Create(bg, map[string]any{"n": 2})
	wantCode(t, "Create of an existing document", err, codes.AlreadyExists, "e/x")

	_, err = c.Doc("e/missing").Update(bg, []gcfirestore.Update{{Path: "n", Value: 1}})
	wantCode(t, "Update of a missing document", err, codes.NotFound, "e/missing")

	_, err = c.Doc("e/missing").Get(bg)
	wantCode(t, "Get of a missing document", err, codes.NotFound)

	_, err = ref.Update(bg, []gcfirestore.Update{{Path: "n", Value: 3}}, gcfirestore.LastUpdateTime(wr.UpdateTime.Add(-time.Second)))
	wantCode(t, "Update with a stale update-time precondition", err, codes.FailedPrecondition, "e/x")

	// Field names the engine rejects: the message names the field. (The Go
	// client checks most of them itself, so this goes through the raw client.)
	rc := raw(t, s, "owner")
	_, err = rc.Commit(bg, &pb.CommitRequest{Database: dbPath(s), Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{
		Name: docPath(s, "e/y"), Fields: map[string]*pb.Value{"ok": {ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{
			Fields: map[string]*pb.Value{"__bad__": {ValueType: &pb.Value_IntegerValue{IntegerValue: 1}}}}}}}}}}}})
	wantCode(t, "reserved field name", err, codes.InvalidArgument, "ok.__bad__")
	_, err = rc.Commit(bg, &pb.CommitRequest{Database: dbPath(s), Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{
		Name: docPath(s, "e/y"), Fields: map[string]*pb.Value{"when": {ValueType: &pb.Value_NullValue{}}, "v": {}}}}}}})
	wantCode(t, "value without a type", err, codes.InvalidArgument, "v")
	one := &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: 1}}
	rq, err := rc.RunQuery(bg, &pb.RunQueryRequest{Parent: dbPath(s) + "/documents", QueryType: &pb.RunQueryRequest_StructuredQuery{StructuredQuery: &pb.StructuredQuery{
		From:    []*pb.StructuredQuery_CollectionSelector{{CollectionId: "e"}},
		OrderBy: []*pb.StructuredQuery_Order{{Field: &pb.StructuredQuery_FieldReference{FieldPath: "n"}, Direction: pb.StructuredQuery_ASCENDING}},
		StartAt: &pb.Cursor{Values: []*pb.Value{one, one, one}},
	}}})
	if err == nil {
		_, err = rq.Recv()
	}
	wantCode(t, "cursor with more values than orders", err, codes.InvalidArgument)

	// A missing composite index when enforcement is on.
	ix := fstest.Start(t, fstest.Options{Indexes: &firestore.IndexConfig{}})
	_, err = ix.Client(t).Collection("e").Where("a", "==", 1).OrderBy("b", gcfirestore.Asc).Documents(bg).GetAll()
	wantCode(t, "query without its composite index", err, codes.FailedPrecondition, "index", `"fieldPath":"a"`, `"fieldPath":"b"`)
}

// Callers: "Bearer owner" is admin and bypasses rules; an unsigned JWT is
// the user named by sub; no Authorization is unauthenticated; anything else
// is INVALID_ARGUMENT "invalid jwt". Denials name the rule and its line.
func TestIdentities(t *testing.T) {
	t.Parallel()
	s := start(t)
	owner := s.Client(t)
	alice := s.ClientAs(t, s.Project, gcfirestore.DefaultDatabaseID, mockToken("alice"))
	nobody := s.ClientAs(t, s.Project, gcfirestore.DefaultDatabaseID, "")
	garbage := s.ClientAs(t, s.Project, gcfirestore.DefaultDatabaseID, "not-a-jwt")

	if _, err := owner.Doc("public/p").Set(bg, map[string]any{"by": "owner"}); err != nil {
		t.Errorf("owner bypasses rules: %v", err)
	}
	if _, err := alice.Doc("users/alice").Set(bg, map[string]any{"me": true}); err != nil {
		t.Errorf("alice writes her document: %v", err)
	}
	_, err := alice.Doc("users/bob").Set(bg, map[string]any{"me": false})
	wantCode(t, "alice writes bob's document", err, codes.PermissionDenied, "false for 'create' @ L5")
	_, err = alice.Doc("public/p").Set(bg, map[string]any{"x": 1})
	wantCode(t, "alice writes a public document", err, codes.PermissionDenied, "false for 'update' @ L9")
	if _, err := nobody.Doc("public/p").Get(bg); err != nil {
		t.Errorf("unauthenticated read of a public document: %v", err)
	}
	_, err = nobody.Doc("users/alice").Get(bg)
	wantCode(t, "unauthenticated read of a user document", err, codes.PermissionDenied, "@ L5")
	_, err = nobody.Collection("users").Documents(bg).GetAll()
	wantCode(t, "unauthenticated list of users", err, codes.PermissionDenied)
	_, err = garbage.Doc("public/p").Get(bg)
	wantCode(t, "malformed bearer", err, codes.InvalidArgument, "invalid jwt")
	_, err = garbage.Doc("open/x").Set(bg, map[string]any{"x": 1})
	wantCode(t, "malformed bearer write", err, codes.InvalidArgument, "invalid jwt")

	// Listeners are judged too: a denied listen ends with PERMISSION_DENIED.
	it := nobody.Doc("users/alice").Snapshots(bg)
	defer it.Stop()
	_, err = it.Next()
	wantCode(t, "unauthenticated listener on a user document", err, codes.PermissionDenied)
	ok := alice.Doc("users/alice").Snapshots(bg)
	defer ok.Stop()
	if snap := next(t, "alice's listener", ok.Next); !snap.Exists() {
		t.Errorf("alice's listener: document missing")
	}
}
