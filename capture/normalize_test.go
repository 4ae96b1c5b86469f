package capture

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/pyric/pyric/event"
)

// TestLineNormalizesInACopy checks that an event's line, now encoded
// where the event is rather than from a copy, is the line of the event
// with its protobuf queries in protojson form (built here by hand, as
// normalize did on a copy of every event), and that the event itself,
// shared with the bus's other readers, is left as it was.
func TestLineNormalizesInACopy(t *testing.T) {
	q := &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "rooms"}}}
	qj, err := protojson.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	at := time.UnixMilli(1700000000123).UTC()
	listener := func(query any) *event.Listener {
		return &event.Listener{Phase: event.Deliver, ListenerID: "l1", Target: &event.Target{Kind: "query", Path: "rooms", Query: query}, Size: 1}
	}
	request := func(query any) *event.Request {
		return &event.Request{Verdict: event.Allow, Seen: &event.Seen{Query: query, Data: map[string]any{"a": "b"}}}
	}
	for _, tc := range []struct {
		name      string
		e, want   event.Event
		untouched func(e *event.Event) bool
	}{
		{"listener proto query",
			event.Event{Seq: 3, ID: "evt-3", At: at, Kind: event.KindListener, Service: "firestore", Listener: listener(q)},
			event.Event{Seq: 3, ID: "evt-3", At: at, Kind: event.KindListener, Service: "firestore", Listener: listener(json.RawMessage(qj))},
			func(e *event.Event) bool { return e.Listener.Target.Query == any(q) }},
		{"request proto query",
			event.Event{Seq: 4, ID: "evt-4", At: at, Kind: event.KindRequest, Service: "firestore", Method: "list", Request: request(q)},
			event.Event{Seq: 4, ID: "evt-4", At: at, Kind: event.KindRequest, Service: "firestore", Method: "list", Request: request(json.RawMessage(qj))},
			func(e *event.Event) bool { return e.Request.Seen.Query == any(q) }},
		{"string query",
			event.Event{Seq: 5, ID: "evt-5", At: at, Kind: event.KindListener, Service: "database", Listener: listener("{}")},
			event.Event{Seq: 5, ID: "evt-5", At: at, Kind: event.KindListener, Service: "database", Listener: listener("{}")},
			func(e *event.Event) bool { return e.Listener.Target.Query == any("{}") }},
		{"no query",
			event.Event{Seq: 6, ID: "evt-6", At: at, Kind: event.KindRequest, Service: "firestore", Method: "get", Request: request(nil)},
			event.Event{Seq: 6, ID: "evt-6", At: at, Kind: event.KindRequest, Service: "firestore", Method: "get", Request: request(nil)},
			func(e *event.Event) bool { return e.Request.Seen.Query == nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l lineEncoder
			before := tc.e
			got, _, err := l.line(&tc.e)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(struct {
				Event event.Event `json:"event"`
			}{tc.want})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want)+"\n" {
				t.Fatalf("line\n%s\nwant\n%s", got, want)
			}
			if !reflect.DeepEqual(tc.e, before) || tc.e.Listener != before.Listener || tc.e.Request != before.Request || !tc.untouched(&tc.e) {
				t.Fatalf("the event changed: %+v", tc.e)
			}
			if !reflect.DeepEqual(l.ev, event.Event{}) {
				t.Fatal("the encoder keeps the event it normalized")
			}
			if n := normalize(tc.e); string(mustLine(t, n)) != string(got) {
				t.Fatalf("normalize's event encodes differently")
			}
		})
	}
}

func mustLine(t *testing.T, e event.Event) []byte {
	t.Helper()
	var l lineEncoder
	b, _, err := l.line(&e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
