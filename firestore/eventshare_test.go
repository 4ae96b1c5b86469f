package firestore

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/rules/source"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// TestWriteEventsShareEncodedValues: a write's request event and commit
// event encode each list of the write once and share it (the data sent
// with the written data, request.resource with the stored document), so
// a write of a 100,000-element list is not copied once per event field
// into every subscriber's queue. The values stay as they were sent.
func TestWriteEventsShareEncodedValues(t *testing.T) {
	t.Parallel()
	gate, diags := NewRulesGate(source.NewFile("firestore.rules", `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /tagged/{id} {
      allow create: if request.resource.data.tags.hasAll(['t1', 't2']);
    }
  }
}`))
	if gate == nil {
		t.Fatal(diags)
	}
	bus := event.NewBus(event.Options{})
	var mu sync.Mutex
	var evs []event.Event
	bus.Tap(func(e event.Event) {
		mu.Lock()
		evs = append(evs, e)
		mu.Unlock()
	})
	e := New(Options{Rules: gate, Events: bus})
	db := DatabaseName{Project: "demo", Database: DefaultDatabase}
	tags := make([]*pb.Value, 1000)
	for i := range tags {
		tags[i] = String(fmt.Sprintf("t%d", i))
	}
	fields := map[string]*pb.Value{"tags": Array(tags...), "meta": Map(map[string]*pb.Value{"n": Int(1)})}
	_, err := e.Commit(context.Background(), identity.NewUser("u0", nil), &pb.CommitRequest{Database: db.String(), Writes: []*pb.Write{{
		Operation: &pb.Write_Update{Update: &pb.Document{Name: db.DocName("tagged/d1"), Fields: fields}}}}})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var req *event.Request
	var commit *event.Commit
	for _, ev := range evs {
		switch ev.Kind {
		case event.KindRequest:
			req = ev.Request
		case event.KindCommit:
			commit = ev.Commit
		}
	}
	if req == nil || req.Seen == nil || req.Seen.After == nil || commit == nil {
		t.Fatalf("events: request %+v, commit %+v", req, commit)
	}
	field := func(data any, k string) any { return data.(map[string]any)[k] }
	same := func(what string, a, b any) {
		t.Helper()
		if reflect.ValueOf(a).Pointer() != reflect.ValueOf(b).Pointer() {
			t.Errorf("%s: two copies of the encoded value", what)
		}
	}
	same("sent data and written data's list", field(req.Seen.Data, "tags"), field(commit.Written, "tags"))
	same("sent data and written data's map", field(req.Seen.Data, "meta"), field(commit.Written, "meta"))
	same("request.resource and the committed document's list", field(req.Seen.After.Data, "tags"), field(commit.After, "tags"))
	got := field(req.Seen.Data, "tags").([]any)
	if len(got) != 1000 || got[0] != "t0" || got[999] != "t999" {
		t.Errorf("sent list encoded as %d elements, first %v", len(got), got[0])
	}
	if !reflect.DeepEqual(commit.After, EncodeFields(fields, db)) || !reflect.DeepEqual(req.Seen.Data, EncodeFields(fields, db)) {
		t.Errorf("shared forms differ from the values' own encoding")
	}
}

// TestUpdateEventsShareEncodedDocuments: an update's request event and
// commit event encode the document before it, and the document after it,
// once each and share the forms (request's resource and the commit's
// before, request.resource and the commit's after), which say what the
// documents hold.
func TestUpdateEventsShareEncodedDocuments(t *testing.T) {
	t.Parallel()
	gate, diags := NewRulesGate(source.NewFile("firestore.rules", `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /docs/{id} {
      allow read, write: if true;
    }
  }
}`))
	if gate == nil {
		t.Fatal(diags)
	}
	bus := event.NewBus(event.Options{})
	var mu sync.Mutex
	var evs []event.Event
	bus.Tap(func(e event.Event) {
		mu.Lock()
		evs = append(evs, e)
		mu.Unlock()
	})
	e := New(Options{Rules: gate, Events: bus})
	db := DatabaseName{Project: "demo", Database: DefaultDatabase}
	who := identity.NewUser("u0", nil)
	commit := func(fields map[string]*pb.Value) {
		t.Helper()
		_, err := e.Commit(context.Background(), who, &pb.CommitRequest{Database: db.String(), Writes: []*pb.Write{{
			Operation: &pb.Write_Update{Update: &pb.Document{Name: db.DocName("docs/d1"), Fields: fields}}}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	before := map[string]*pb.Value{"n": Int(1), "s": String("a")}
	after := map[string]*pb.Value{"n": Int(2), "s": String("b")}
	commit(before)
	mu.Lock()
	evs = nil
	mu.Unlock()
	commit(after)
	mu.Lock()
	defer mu.Unlock()
	var req *event.Request
	var c *event.Commit
	for _, ev := range evs {
		switch ev.Kind {
		case event.KindRequest:
			req = ev.Request
		case event.KindCommit:
			c = ev.Commit
		}
	}
	if req == nil || req.Seen == nil || req.Seen.Before == nil || req.Seen.After == nil || c == nil {
		t.Fatalf("events: request %+v, commit %+v", req, c)
	}
	same := func(what string, a, b any) {
		t.Helper()
		if reflect.ValueOf(a).Pointer() != reflect.ValueOf(b).Pointer() {
			t.Errorf("%s: two copies of the encoded document", what)
		}
	}
	same("resource and the commit's before", req.Seen.Before.Data, c.Before)
	same("request.resource and the commit's after", req.Seen.After.Data, c.After)
	if !reflect.DeepEqual(c.Before, EncodeFields(before, db)) || !reflect.DeepEqual(c.After, EncodeFields(after, db)) ||
		!reflect.DeepEqual(c.Written, EncodeFields(after, db)) {
		t.Errorf("shared forms differ from the documents' own encoding: before %v, after %v, written %v", c.Before, c.After, c.Written)
	}
}

// TestSetEventsShareWrittenAndAfter: a write of the whole document
// whose fields the engine keeps as sent gives its commit event one form
// for what it wrote and the document after it; a write whose stored
// document differs from what it sent (a timestamp cut to microseconds, a
// transform, a field mask) keeps two forms, each saying what it is.
func TestSetEventsShareWrittenAndAfter(t *testing.T) {
	t.Parallel()
	bus := event.NewBus(event.Options{})
	var mu sync.Mutex
	var evs []event.Event
	bus.Tap(func(e event.Event) {
		mu.Lock()
		evs = append(evs, e)
		mu.Unlock()
	})
	e := New(Options{Events: bus})
	db := DatabaseName{Project: "demo", Database: DefaultDatabase}
	at := func(nanos int32) *pb.Value {
		return &pb.Value{ValueType: &pb.Value_TimestampValue{TimestampValue: &timestamppb.Timestamp{Seconds: 1700000000, Nanos: nanos}}}
	}
	cases := []struct {
		name   string
		fields map[string]*pb.Value
		write  func(w *pb.Write)
		shared bool
	}{
		{name: "plain set", fields: map[string]*pb.Value{"i": Int(1), "s": String("x"), "m": Map(map[string]*pb.Value{"t": at(5000)})}, shared: true},
		{name: "timestamp cut to microseconds", fields: map[string]*pb.Value{"i": Int(1), "m": Map(map[string]*pb.Value{"t": at(5001)})}},
		{name: "transform", fields: map[string]*pb.Value{"i": Int(1)}, write: func(w *pb.Write) { w.UpdateTransforms = []*pb.DocumentTransform_FieldTransform{tr("at", serverTime())} }},
		{name: "mask", fields: map[string]*pb.Value{"i": Int(1), "j": Int(2)}, write: func(w *pb.Write) { w.UpdateMask = &pb.DocumentMask{FieldPaths: []string{"i"}} }},
	}
	for i, tc := range cases {
		mu.Lock()
		evs = nil
		mu.Unlock()
		name := db.DocName(fmt.Sprintf("docs/d%d", i))
		w := &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: name, Fields: tc.fields}}}
		if tc.write != nil {
			tc.write(w)
		}
		if _, err := e.Commit(context.Background(), identity.AdminIdentity(), &pb.CommitRequest{Database: db.String(), Writes: []*pb.Write{w}}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		stored, err := e.GetDocument(context.Background(), identity.AdminIdentity(), &pb.GetDocumentRequest{Name: name})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		mu.Lock()
		var c *event.Commit
		for _, ev := range evs {
			if ev.Kind == event.KindCommit {
				c = ev.Commit
			}
		}
		mu.Unlock()
		if c == nil {
			t.Fatalf("%s: no commit event", tc.name)
		}
		if got := reflect.ValueOf(c.After).Pointer() == reflect.ValueOf(c.Written).Pointer(); got != tc.shared {
			t.Errorf("%s: after and written share one form = %v, want %v", tc.name, got, tc.shared)
		}
		if !reflect.DeepEqual(c.After, EncodeFields(stored.Fields, db)) {
			t.Errorf("%s: after %v, the stored document %v", tc.name, c.After, EncodeFields(stored.Fields, db))
		}
		if !reflect.DeepEqual(c.Written, EncodeFields(tc.fields, db)) {
			t.Errorf("%s: written %v, sent %v", tc.name, c.Written, EncodeFields(tc.fields, db))
		}
	}
}

// TestEmittedEventsOutliveTheirSlice: a commit's events are gathered in
// a slice reused by the next commits once emitted (eventSlice); what the
// bus keeps and what a subscriber receives are the events as they were
// emitted, whatever commits come after.
func TestEmittedEventsOutliveTheirSlice(t *testing.T) {
	t.Parallel()
	bus := event.NewBus(event.Options{})
	sub := bus.Subscribe(1000)
	defer sub.Close()
	e := New(Options{Events: bus})
	db := DatabaseName{Project: "demo", Database: DefaultDatabase}
	const n = 50
	for i := range n {
		w := &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: db.DocName(fmt.Sprintf("docs/d%d", i)), Fields: map[string]*pb.Value{"i": Int(int64(i))}}}}
		if _, err := e.Commit(context.Background(), identity.AdminIdentity(), &pb.CommitRequest{Database: db.String(), Writes: []*pb.Write{w}}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(from string, evs []event.Event) {
		t.Helper()
		commits := 0
		for _, ev := range evs {
			if ev.Kind != event.KindCommit {
				continue
			}
			want := fmt.Sprintf("docs/d%d", commits)
			if ev.Path != want || ev.Service != ServiceName || !reflect.DeepEqual(ev.Commit.After, map[string]any{"i": json.Number(fmt.Sprint(commits))}) {
				t.Fatalf("%s: commit event %d is %s %s %v, want %s with i=%d", from, commits, ev.Service, ev.Path, ev.Commit.After, want, commits)
			}
			commits++
		}
		if commits != n {
			t.Errorf("%s: %d commit events, want %d", from, commits, n)
		}
	}
	check("history", bus.History())
	var got []event.Event
	for len(sub.Events()) > 0 {
		got = append(got, <-sub.Events())
	}
	check("subscription", got)
}

// TestAdminCommitsBypassTheRules: admin's writes commit under rules that
// deny everything, their request events say the rules were bypassed,
// and a batch deleting then updating one document is refused as the
// official emulator refuses it, for admin and for a user alike.
func TestAdminCommitsBypassTheRules(t *testing.T) {
	t.Parallel()
	gate, diags := NewRulesGate(source.NewFile("firestore.rules", `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /{doc=**} {
      allow read, write: if false;
    }
  }
}`))
	if gate == nil {
		t.Fatal(diags)
	}
	bus := event.NewBus(event.Options{})
	e := New(Options{Rules: gate, Events: bus})
	commitT(t, e, admin, upd("c/a", map[string]*pb.Value{"n": Int(1)}), upd("c/b", map[string]*pb.Value{"n": Int(2)}))
	if getT(t, e, "c/a") == nil || getT(t, e, "c/b") == nil {
		t.Fatal("admin's batch did not commit")
	}
	requests := 0
	for _, ev := range bus.History() {
		if ev.Kind == event.KindRequest && (ev.Method == string(MethodCreate) || ev.Method == string(MethodUpdate)) {
			requests++
			if ev.Request.Verdict != event.Bypassed {
				t.Errorf("admin's %s of %s: verdict %s, want %s", ev.Method, ev.Path, ev.Request.Verdict, event.Bypassed)
			}
		}
	}
	if requests != 2 {
		t.Errorf("%d write request events, want 2", requests)
	}
	if _, err := e.Commit(bg, identity.NewUser("u", nil), &pb.CommitRequest{Database: testDB.String(), Writes: []*pb.Write{upd("c/a", map[string]*pb.Value{"n": Int(3)})}}); Code(err) != codes.PermissionDenied {
		t.Errorf("a user's write under deny-all rules: %v, want PERMISSION_DENIED", err)
	}
	for _, who := range []identity.Identity{admin, identity.NewUser("u", nil)} {
		update := upd("c/a", map[string]*pb.Value{"n": Int(4)})
		update.CurrentDocument = &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: true}}
		_, err := e.Commit(bg, who, &pb.CommitRequest{Database: testDB.String(), Writes: []*pb.Write{del("c/a"), update}})
		if Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "Cannot delete then update") {
			t.Errorf("delete then update of one document as %v: %v, want INVALID_ARGUMENT", who.Kind, err)
		}
	}
}
