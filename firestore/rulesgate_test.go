package firestore

import (
	"context"
	"strings"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/identity"
	fsrules "github.com/pyric/pyric/rules/firestore"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
)

const gateRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /rooms/{room} {
      allow read: if resource.data.members.hasAny([request.auth.uid]) || resource.data.owner == request.auth.uid;
      allow create: if request.resource.data.owner == request.auth.uid
        && request.resource.data.created == request.time;
      allow update: if resource.data.owner == request.auth.uid
        && get(/databases/$(database)/documents/users/$(request.auth.uid)).data.active == true;
      match /messages/{msg} {
        allow create: if getAfter(/databases/$(database)/documents/rooms/$(room)).data.count > 0;
      }
    }
  }
}`

func TestRulesGateThroughTheEngine(t *testing.T) {
	ctx := context.Background()
	gate, diags := NewRulesGate(source.NewFile("firestore.rules", gateRules))
	if gate == nil {
		t.Fatal(diags)
	}
	e := New(Options{Rules: gate})
	db := DatabaseName{Project: "demo", Database: DefaultDatabase}
	alice, bob := identity.NewUser("alice", nil), identity.NewUser("bob", nil)
	admin := identity.AdminIdentity()
	commit := func(who identity.Identity, writes ...*pb.Write) error {
		_, err := e.Commit(ctx, who, &pb.CommitRequest{Database: db.String(), Writes: writes})
		return err
	}
	set := func(path string, fields map[string]*pb.Value) *pb.Write {
		return &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: db.DocName(path), Fields: fields}}}
	}
	serverTime := func(path, field string) *pb.Write {
		return &pb.Write{Operation: &pb.Write_Transform{Transform: &pb.DocumentTransform{Document: db.DocName(path),
			FieldTransforms: []*pb.DocumentTransform_FieldTransform{{FieldPath: field,
				TransformType: &pb.DocumentTransform_FieldTransform_SetToServerValue{SetToServerValue: pb.DocumentTransform_FieldTransform_REQUEST_TIME}}}}}}
	}

	// create: request.resource.data carries the server timestamp at request.time.
	w := set("rooms/r1", map[string]*pb.Value{"owner": String("alice"), "members": Array(String("bob")), "count": Int(0)})
	w.UpdateTransforms = serverTime("rooms/r1", "created").GetTransform().FieldTransforms
	if err := commit(alice, w); err != nil {
		t.Fatalf("owner create with server timestamp: %v", err)
	}
	w2 := set("rooms/r2", map[string]*pb.Value{"owner": String("bob")})
	w2.UpdateTransforms = serverTime("rooms/r2", "created").GetTransform().FieldTransforms
	err := commit(alice, w2)
	if Code(err).String() != "PermissionDenied" {
		t.Fatalf("create for someone else: %v", err)
	}
	d, ok := DenialOf(err)
	if !ok {
		t.Fatalf("no denial on %v", err)
	}
	dec, ok := d.Decision.Explanation.(*fsrules.Decision)
	if !ok || dec.Outcome != sim.Deny || len(dec.Trace) == 0 || dec.Trace[0].Line != 6 || len(dec.Trace[0].Expressions) == 0 {
		t.Errorf("explanation = %#v", d.Decision.Explanation)
	}

	// get: members contains the caller.
	if _, err := e.GetDocument(ctx, bob, &pb.GetDocumentRequest{Name: db.DocName("rooms/r1")}); err != nil {
		t.Errorf("member get: %v", err)
	}
	if _, err := e.GetDocument(ctx, identity.NewUser("carol", nil), &pb.GetDocumentRequest{Name: db.DocName("rooms/r1")}); Code(err).String() != "PermissionDenied" {
		t.Errorf("stranger get: %v", err)
	}

	// update: get() reads committed state.
	upd := set("rooms/r1", map[string]*pb.Value{"owner": String("alice"), "count": Int(1)})
	upd.UpdateMask = &pb.DocumentMask{FieldPaths: []string{"count"}}
	if err := commit(alice, upd); Code(err).String() != "PermissionDenied" {
		t.Fatalf("update without active user doc: %v", err)
	}
	if err := commit(admin, set("users/alice", map[string]*pb.Value{"active": Bool(true)})); err != nil {
		t.Fatal(err)
	}
	if err := commit(alice, upd); err != nil {
		t.Fatalf("update with active user doc: %v", err)
	}

	// getAfter sees the batch's other writes.
	msg := set("rooms/r1/messages/m1", map[string]*pb.Value{"text": String("hi")})
	zero := set("rooms/r1", map[string]*pb.Value{"count": Int(0)})
	zero.UpdateMask = &pb.DocumentMask{FieldPaths: []string{"count"}}
	if err := commit(alice, zero, msg); Code(err).String() != "PermissionDenied" {
		t.Errorf("message with count 0 after the batch: %v", err)
	}
	two := set("rooms/r1", map[string]*pb.Value{"count": Int(2)})
	two.UpdateMask = &pb.DocumentMask{FieldPaths: []string{"count"}}
	if err := commit(alice, two, msg); err != nil {
		t.Errorf("message with count 2 after the batch: %v", err)
	}

	// list: rules are not filters.
	query := func(who identity.Identity, where *pb.StructuredQuery_Filter) error {
		_, err := e.RunQuery(ctx, who, &pb.RunQueryRequest{Parent: db.Documents(), QueryType: &pb.RunQueryRequest_StructuredQuery{
			StructuredQuery: &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "rooms"}}, Where: where}}})
		return err
	}
	if err := query(alice, nil); Code(err).String() != "PermissionDenied" || !strings.Contains(err.Error(), "") {
		t.Errorf("unfiltered list: %v", err)
	}
	ownerFilter := &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_FieldFilter{FieldFilter: &pb.StructuredQuery_FieldFilter{
		Field: &pb.StructuredQuery_FieldReference{FieldPath: "owner"}, Op: pb.StructuredQuery_FieldFilter_EQUAL, Value: String("alice")}}}
	if err := query(alice, ownerFilter); err != nil {
		t.Errorf("owner-filtered list: %v", err)
	}
	if err := query(bob, ownerFilter); Code(err).String() != "PermissionDenied" {
		t.Errorf("someone else's owner filter: %v", err)
	}
}
