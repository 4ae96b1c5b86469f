package studio_test

import (
	"context"
	"strings"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/internal/testfs"
	"github.com/pyric/pyric/sandbox"
)

const rerunRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /rooms/{room} {
      allow read: if true;
    }
    match /rooms/{room}/posts/{id} {
      allow get: if request.auth.uid in get(/databases/$(database)/documents/rooms/$(room)).data.members;
      allow create: if get(/databases/$(database)/documents/rooms/$(room)).data.open == true
        && request.resource.data.n < 10;
      allow update: if request.resource.data.n < 10 && request.resource.data.at == request.time;
    }
  }
}
`

// TestRerunIsExact: re-running each recorded request with the rules that
// decided it reproduces its verdict, though later writes changed the
// documents its get() read and updates were shaped by transforms the
// data sent does not show; edited rules flip exactly the verdicts they
// should.
func TestRerunIsExact(t *testing.T) {
	e := start(t, sandbox.Options{})
	ctx := context.Background()
	fs := testfs.Of(e.b.Sandbox).Engine
	db := testfs.Of(e.b.Sandbox).Default()
	alice := identity.NewUser("alice", map[string]any{"sub": "alice", "user_id": "alice"})
	admin := identity.AdminIdentity()
	if _, err := e.b.Firestore().Server.Rules().Set("firestore.rules", rerunRules); err != nil {
		t.Fatal(err)
	}
	intv := func(n int64) *pb.Value { return &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: n}} }
	commit := func(who identity.Identity, w *pb.Write) {
		fs.Commit(ctx, who, &pb.CommitRequest{Database: db.String(), Writes: []*pb.Write{w}})
	}
	set := func(path string, fields map[string]*pb.Value) *pb.Write {
		return &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: db.DocName(path), Fields: fields}}}
	}
	bump := func(path string, by int64) *pb.Write {
		return &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: db.DocName(path)}},
			UpdateMask: &pb.DocumentMask{}, CurrentDocument: &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: true}},
			UpdateTransforms: []*pb.DocumentTransform_FieldTransform{
				{FieldPath: "n", TransformType: &pb.DocumentTransform_FieldTransform_Increment{Increment: intv(by)}},
				{FieldPath: "at", TransformType: &pb.DocumentTransform_FieldTransform_SetToServerValue{SetToServerValue: pb.DocumentTransform_FieldTransform_REQUEST_TIME}},
			}}
	}
	room := func(open bool) map[string]*pb.Value {
		return map[string]*pb.Value{"open": {ValueType: &pb.Value_BooleanValue{BooleanValue: open}},
			"members": {ValueType: &pb.Value_ArrayValue{ArrayValue: &pb.ArrayValue{Values: []*pb.Value{{ValueType: &pb.Value_StringValue{StringValue: "alice"}}}}}}}
	}
	commit(admin, set("rooms/r1", room(true)))
	commit(alice, set("rooms/r1/posts/p1", map[string]*pb.Value{"n": intv(1)})) // allow: the room is open
	commit(alice, bump("rooms/r1/posts/p1", 5))                                 // allow: n becomes 6, at the request time
	commit(alice, bump("rooms/r1/posts/p1", 5))                                 // deny: n would become 11
	commit(admin, set("rooms/r1", map[string]*pb.Value{"open": {ValueType: &pb.Value_BooleanValue{BooleanValue: false}}}))
	commit(alice, set("rooms/r1/posts/p2", map[string]*pb.Value{"n": intv(1)})) // deny: the room is closed
	fs.BatchGetDocuments(ctx, alice, &pb.BatchGetDocumentsRequest{Database: db.String(), Documents: []string{db.DocName("rooms/r1/posts/p1")}})
	// deny: alice is no longer a member (the room was replaced)

	var p page
	e.do(t, "GET", "/api/events?service=firestore&limit=1000", nil, &p)
	var evs []event.Event
	for _, ev := range p.Events {
		if ev.Kind == event.KindRequest && ev.Verdict != event.Bypassed {
			evs = append(evs, ev)
		}
	}
	wantVerdicts := []event.Verdict{event.Allow, event.Allow, event.Deny, event.Deny, event.Deny}
	if len(evs) != len(wantVerdicts) {
		t.Fatalf("%d request events, want %d: %+v", len(evs), len(wantVerdicts), evs)
	}
	for i, ev := range evs {
		if ev.Verdict != wantVerdicts[i] {
			t.Fatalf("event %d (%s %s) decided %s, want %s: %+v", i, ev.Method, ev.Path, ev.Verdict, wantVerdicts[i], ev.Decision)
		}
	}
	type result struct {
		Verdict     event.Verdict
		Reason      string
		Notes       []string
		Explanation []string
	}
	rerun := func(ev event.Event, src string) result {
		t.Helper()
		var r result
		if c := e.do(t, "POST", "/api/events/"+ev.ID+"/rerun", map[string]any{"source": src}, &r); c != 200 {
			t.Fatalf("rerun %s: %d %+v", ev.ID, c, r)
		}
		return r
	}
	for i, ev := range evs {
		r := rerun(ev, rerunRules)
		if r.Verdict != ev.Verdict || len(r.Notes) != 0 {
			t.Errorf("event %d (%s %s): re-run with the same rules gave %s (%s, notes %v), recorded %s", i, ev.Method, ev.Path, r.Verdict, r.Reason, r.Notes, ev.Verdict)
		}
	}
	// Edited rules: a higher bound allows the second bump; a closed room
	// allowing creates flips both creates.
	for _, tc := range []struct {
		name, from, to string
		want           []event.Verdict
	}{
		{"n < 20", "request.resource.data.n < 10;\n      allow update: if request.resource.data.n < 10", "request.resource.data.n < 10;\n      allow update: if request.resource.data.n < 20",
			[]event.Verdict{event.Allow, event.Allow, event.Allow, event.Deny, event.Deny}},
		{"closed rooms", "data.open == true", "data.open == false",
			[]event.Verdict{event.Deny, event.Allow, event.Deny, event.Allow, event.Deny}},
		{"at ignored", " && request.resource.data.at == request.time", "",
			[]event.Verdict{event.Allow, event.Allow, event.Deny, event.Deny, event.Deny}},
	} {
		src := strings.Replace(rerunRules, tc.from, tc.to, 1)
		if src == rerunRules {
			t.Fatalf("%s: edit did not apply", tc.name)
		}
		for i, ev := range evs {
			if r := rerun(ev, src); r.Verdict != tc.want[i] {
				t.Errorf("%s: event %d (%s %s) re-ran %s (%s), want %s", tc.name, i, ev.Method, ev.Path, r.Verdict, r.Reason, tc.want[i])
			}
		}
	}
	// Rules reading a document the request did not read see the state as
	// of the request, and say so.
	readsMore := strings.Replace(rerunRules, "allow read: if true;", "allow read: if true;\n      allow write: if false;", 1)
	readsMore = strings.Replace(readsMore, "request.resource.data.n < 10 && request.resource.data.at == request.time",
		"get(/databases/$(database)/documents/rooms/$(room)).data.open == true", 1)
	r := rerun(evs[1], readsMore)
	if r.Verdict != event.Allow || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "rooms/r1") {
		t.Errorf("rules reading more: %+v, want allow (the room was open then) with a note", r)
	}
}

// TestRerunList: a list request is re-decided with the query it sent
// (request.query and the filters "rules are not filters" reads).
func TestRerunList(t *testing.T) {
	e := start(t, sandbox.Options{})
	ctx := context.Background()
	fs, db := testfs.Of(e.b.Sandbox).Engine, testfs.Of(e.b.Sandbox).Default()
	rules := `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /posts/{id} {
      allow list: if request.query.limit <= 10 && resource.data.owner == request.auth.uid;
    }
  }
}
`
	if _, err := e.b.Firestore().Server.Rules().Set("firestore.rules", rules); err != nil {
		t.Fatal(err)
	}
	alice := identity.NewUser("alice", map[string]any{"sub": "alice"})
	query := func(limit int32, owner string) {
		fs.RunQuery(ctx, alice, &pb.RunQueryRequest{Parent: db.Documents(), QueryType: &pb.RunQueryRequest_StructuredQuery{StructuredQuery: &pb.StructuredQuery{
			From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "posts"}},
			Where: &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_FieldFilter{FieldFilter: &pb.StructuredQuery_FieldFilter{
				Field: &pb.StructuredQuery_FieldReference{FieldPath: "owner"}, Op: pb.StructuredQuery_FieldFilter_EQUAL,
				Value: &pb.Value{ValueType: &pb.Value_StringValue{StringValue: owner}}}}},
			Limit: wrapperspb.Int32(limit)}}})
	}
	query(5, "alice")  // allow
	query(50, "alice") // deny: limit
	query(5, "bob")    // deny: not a filter on her own posts
	var p page
	e.do(t, "GET", "/api/events?service=firestore&limit=100", nil, &p)
	var evs []event.Event
	for _, ev := range p.Events {
		if ev.Kind == event.KindRequest && ev.Method == "list" {
			evs = append(evs, ev)
		}
	}
	want := []event.Verdict{event.Allow, event.Deny, event.Deny}
	if len(evs) != len(want) {
		t.Fatalf("%d list events: %+v", len(evs), evs)
	}
	edited := strings.Replace(rules, "limit <= 10", "limit <= 100", 1)
	wantEdited := []event.Verdict{event.Allow, event.Allow, event.Deny}
	for i, ev := range evs {
		if ev.Verdict != want[i] {
			t.Fatalf("list %d decided %s, want %s", i, ev.Verdict, want[i])
		}
		var r struct{ Verdict event.Verdict }
		if e.do(t, "POST", "/api/events/"+ev.ID+"/rerun", map[string]any{"source": rules}, &r); r.Verdict != ev.Verdict {
			t.Errorf("list %d: re-run %s, recorded %s", i, r.Verdict, ev.Verdict)
		}
		if e.do(t, "POST", "/api/events/"+ev.ID+"/rerun", map[string]any{"source": edited}, &r); r.Verdict != wantEdited[i] {
			t.Errorf("list %d against edited rules: %s, want %s", i, r.Verdict, wantEdited[i])
		}
	}
}
