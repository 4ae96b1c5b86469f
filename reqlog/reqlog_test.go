package reqlog

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/internal/await"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/sandbox/service"
)

type buf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *buf) Write(p []byte) (int, error) { b.mu.Lock(); defer b.mu.Unlock(); return b.b.Write(p) }
func (b *buf) String() string              { b.mu.Lock(); defer b.mu.Unlock(); return b.b.String() }

const rules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /posts/{id} {
      allow create: if request.auth != null && request.resource.data.title.size() < 20;
    }
  }
}
`

// deny makes a real engine deny a create and returns the bus.
func deny(t *testing.T, bus *event.Bus) {
	gate, diags := firestore.NewRulesGate(source.NewFile("firestore.rules", rules))
	if gate == nil {
		t.Fatal(diags)
	}
	e := firestore.New(firestore.Options{Rules: gate, Events: bus})
	db := firestore.DatabaseName{Project: "p", Database: "(default)"}
	_, err := e.Commit(context.Background(), identity.NewUser("alice", nil), &pb.CommitRequest{Database: db.String(),
		Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{Name: db.DocName("posts/p1"),
			Fields: map[string]*pb.Value{"title": {ValueType: &pb.Value_StringValue{StringValue: strings.Repeat("t", 27)}}}}}}}})
	if firestore.Code(err).String() != "PermissionDenied" {
		t.Fatalf("err = %v", err)
	}
}

func runLog(t *testing.T, opts Options) (*event.Bus, *buf, func()) {
	bus := event.NewBus(event.Options{})
	out := &buf{}
	return bus, out, Start(bus, out, opts)
}

func TestText(t *testing.T) {
	bus, out, stop := runLog(t, Options{})
	deny(t, bus)
	want := "pyric: DENY firestore create posts/p1 uid=alice rule L5:7: request.resource.data.title.size() < 20 → 27 < 20 is false ["
	if !await.Poll(5*time.Second, func() bool { return strings.Contains(out.String(), want) }) {
		t.Fatalf("log:\n%s\nwant a line containing %q", out.String(), want)
	}
	stop()
}

func TestJSON(t *testing.T) {
	bus, out, stop := runLog(t, Options{JSON: true})
	deny(t, bus)
	if !await.Poll(5*time.Second, func() bool { return strings.Contains(out.String(), `"posts/p1"`) }) {
		t.Fatalf("log:\n%s", out.String())
	}
	stop()
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var x Line
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		if x.Path == "posts/p1" && (x.UID != "alice" || x.Line != 5 || len(x.Failing) != 1 || x.Reason != "false for 'create' @ L5") {
			t.Fatalf("line %+v", x)
		}
	}
}

func TestQuietAndFormat(t *testing.T) {
	bus, out, stop := runLog(t, Options{Quiet: true})
	deny(t, bus)
	stop()
	if out.String() != "" {
		t.Fatalf("quiet wrote %q", out.String())
	}
	if _, ok := Format(&event.Event{Kind: event.KindRequest, Request: &event.Request{Verdict: event.Allow}}); ok {
		t.Fatal("an allow is logged")
	}
	l, ok := Format(&event.Event{Kind: event.KindGap, Gap: &event.Gap{Missed: 3}})
	if !ok || l.Missed != 3 || l.Level != "warn" {
		t.Fatalf("gap %+v", l)
	}
	l, _ = Format(&event.Event{ID: "evt-1", Kind: event.KindRequest, Service: "storage", Method: "write", Path: "a/b",
		Actor: event.Actor{Kind: event.ActorStudio}, Request: &event.Request{Verdict: event.Deny, Decision: &event.Explanation{Reason: "no\nrule"}}})
	if l.Message != "DENY storage write a/b unauthenticated via studio: no rule [evt-1]" {
		t.Fatalf("%q", l.Message)
	}
}

// The Realtime Database's denials get the same line: the deciding rule and
// the failing sub-expression with its values.
func TestDatabaseDenial(t *testing.T) {
	bus, out, stop := runLog(t, Options{})
	defer stop()
	db, err := database.New(service.Env{Project: "p", Events: bus}, database.Options{Rules: `{"rules": {"users": {"$uid": {
  ".write": "auth != null && auth.uid === $uid"}}}}`})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Set(identity.NewUser("bob", nil), database.DefaultNamespace("p"), "/users/alice", "x", database.WriteOptions{}); err == nil {
		t.Fatal("bob wrote alice's node")
	}
	want := "pyric: DENY database set /users/alice uid=bob rule L2:14: auth.uid === $uid → 'bob' === 'alice' is false ["
	if !await.Poll(5*time.Second, func() bool { return strings.Contains(out.String(), want) }) {
		t.Fatalf("log:\n%s\nwant a line containing %q", out.String(), want)
	}
}
