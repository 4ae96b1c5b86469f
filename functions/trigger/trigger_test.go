package trigger

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/pyric/pyric/event"
)

var testEnv = Env{Project: "demo-p", DatabaseInstance: "demo-p-default-rtdb", StorageURL: "http://127.0.0.1:9199",
	NewID: func() string { return "evt1" }}

var t0 = time.Date(2026, 12, 6, 10, 0, 0, 123456000, time.UTC)

func decodeJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("payload is not JSON: %v\n%s", err, b)
	}
	return m
}

// get walks a decoded payload along dotted keys.
func get(m map[string]any, path string) any {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

func TestPatternMatch(t *testing.T) {
	t.Parallel()
	cases := []struct {
		pat, path string
		want      map[string]string // nil: no match
	}{
		{"users/{uid}", "users/alice", map[string]string{"uid": "alice"}},
		{"users/{uid}", "users/alice/posts/p1", nil},
		{"users/{uid}", "users", nil},
		{"users/{uid}/posts/{pid}", "users/a/posts/p%201", map[string]string{"uid": "a", "pid": "p 1"}},
		{"users/*", "users/x", map[string]string{}},
		{"users/**", "users/x/y/z", map[string]string{}},
		{"users/{rest=**}", "users/x/y/z", map[string]string{"rest": "x/y/z"}},
		{"users/{rest=**}", "users", map[string]string{"rest": ""}},
		{"{coll}/{doc=*}", "rooms/r1", map[string]string{"coll": "rooms", "doc": "r1"}},
		{"/cases/{caseId}/items/{itemId}/", "cases/c1/items/alpha", map[string]string{"caseId": "c1", "itemId": "alpha"}},
		{"a/**/z", "a/z", map[string]string{}},
		{"a/**/z", "a/b/c/z", map[string]string{}},
		{"a/**/z", "a/b/c", nil},
		{"exact/doc", "exact/doc", map[string]string{}},
		{"exact/doc", "exact/other", nil},
	}
	for _, c := range cases {
		got, ok := Compile(c.pat).Match(splitPath(c.path))
		if (c.want == nil) != !ok || (ok && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("Compile(%q).Match(%q) = %v, %v; want %v", c.pat, c.path, got, ok, c.want)
		}
	}
}

func fsCommit(path string, before, after map[string]any, who event.Identity) event.Event {
	c := &event.Commit{RequestTime: t0, Database: "(default)"}
	if before != nil {
		c.Before, c.BeforeCreateTime, c.BeforeUpdateTime = before, t0.Add(-time.Hour), t0.Add(-time.Minute)
	}
	if after != nil {
		c.After, c.UpdateTime = after, t0
		c.CreateTime = t0
		if before != nil {
			c.CreateTime = t0.Add(-time.Hour)
		}
	}
	return event.Event{Kind: event.KindCommit, Service: "firestore", Path: path, Identity: who, At: t0, Commit: c}
}

var alice = event.Identity{Lens: event.LensUser, UID: "alice", Token: map[string]any{"email": "a@x.com"}}
var admin = event.Identity{Lens: event.LensAdmin, Admin: true}

func fsV2(typ, pattern string) Function {
	return Function{ID: "f", Platform: GCFv2, EventType: typ, Region: "us-central1",
		EventFilters:            map[string]string{"database": "(default)", "namespace": "(default)"},
		EventFilterPathPatterns: map[string]string{"document": pattern}}
}

func TestFirestoreV2Payload(t *testing.T) {
	t.Parallel()
	before := map[string]any{"n": json.Number("1"), "keep": "k", "m": map[string]any{"a": true, "b": "x"}}
	after := map[string]any{"n": json.Number("2"), "keep": "k", "m": map[string]any{"a": false, "b": "x"},
		"ts": map[string]any{"__type": "timestamp", "seconds": int64(1700000000), "nanos": int32(5)}, "ref": map[string]any{"__type": "reference", "path": "users/bob"}}
	ev := fsCommit("users/alice", before, after, alice)
	ds, err := Deliveries(fsV2("google.cloud.firestore.document.v1.updated.withAuthContext", "users/{uid}"), ev, testEnv)
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries %v, %v", ds, err)
	}
	if !reflect.DeepEqual(ds[0].Params, map[string]string{"uid": "alice"}) {
		t.Errorf("params %v", ds[0].Params)
	}
	m := decodeFirestoreV2(t, ds[0].Payload)
	for k, want := range map[string]any{
		"specversion": "1.0", "type": "google.cloud.firestore.document.v1.updated.withAuthContext",
		// production's source (the emulator writes projects/projects/…)
		"source": "//firestore.googleapis.com/projects/demo-p/databases/(default)", "subject": "documents/users/alice",
		"datacontenttype": "application/protobuf", "project": "demo-p", "database": "(default)", "namespace": "(default)",
		"document": "users/alice", "location": "us-central1", "authtype": "app_user", "authid": "alice",
		"time":                     "2026-12-06T10:00:00.123456Z",
		"data.value.name":          "projects/demo-p/databases/(default)/documents/users/alice",
		"data.value.createTime":    "2026-12-06T09:00:00.123456Z",
		"data.value.updateTime":    "2026-12-06T10:00:00.123456Z",
		"data.oldValue.updateTime": "2026-12-06T09:59:00.123456Z",
		// (decoded from the protobuf into its JSON form: integers as
		// strings, typed values)
		"data.value.fields.n.integerValue":                   "2",
		"data.oldValue.fields.n.integerValue":                "1",
		"data.value.fields.ts.timestampValue":                "2023-11-14T22:13:20.000000005Z",
		"data.value.fields.ref.referenceValue":               "projects/demo-p/databases/(default)/documents/users/bob",
		"data.value.fields.m.mapValue.fields.a.booleanValue": false,
	} {
		if got := get(m, k); !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", k, got, want)
		}
	}
	if got := get(m, "data.updateMask.fieldPaths"); !reflect.DeepEqual(got, []any{"m.a", "n", "ref", "ts"}) {
		t.Errorf("updateMask = %v", got)
	}

	// created fires on create only; the plain type carries no authtype.
	f := fsV2("google.cloud.firestore.document.v1.created", "users/{uid}")
	if ds, _ := Deliveries(f, ev, testEnv); len(ds) != 0 {
		t.Errorf("created fired for an update")
	}
	ds, _ = Deliveries(f, fsCommit("users/bob", nil, after, admin), testEnv)
	if len(ds) != 1 {
		t.Fatalf("created did not fire for a create")
	}
	m = decodeFirestoreV2(t, ds[0].Payload)
	if _, ok := m["authtype"]; ok {
		t.Errorf("authtype on a plain event")
	}
	if _, ok := get(m, "data").(map[string]any)["oldValue"]; ok {
		t.Errorf("oldValue on a create: %v", get(m, "data"))
	}
	// deleted, written; other databases and paths don't fire.
	del := fsCommit("users/bob", before, nil, admin)
	for typ, n := range map[string]int{"deleted": 1, "written": 1, "created": 0, "updated": 0} {
		if ds, _ := Deliveries(fsV2("google.cloud.firestore.document.v1."+typ, "users/{uid}"), del, testEnv); len(ds) != n {
			t.Errorf("%s on delete: %d deliveries, want %d", typ, len(ds), n)
		}
	}
	other := fsCommit("users/bob", nil, after, admin)
	other.Commit.Database = "other"
	if ds, _ := Deliveries(fsV2("google.cloud.firestore.document.v1.written", "users/{uid}"), other, testEnv); len(ds) != 0 {
		t.Errorf("fired for another database")
	}
	if ds, _ := Deliveries(fsV2("google.cloud.firestore.document.v1.written", "users/{uid}"), fsCommit("users/bob/posts/p", nil, after, admin), testEnv); len(ds) != 0 {
		t.Errorf("fired for a subcollection document")
	}
	exact := Function{ID: "e", Platform: GCFv2, EventType: "google.cloud.firestore.document.v1.written",
		EventFilters: map[string]string{"database": "(default)", "namespace": "(default)", "document": "config/app"}}
	if ds, _ := Deliveries(exact, fsCommit("config/app", nil, after, admin), testEnv); len(ds) != 1 {
		t.Errorf("exact document filter did not fire")
	}
}

func TestFirestoreV1Payload(t *testing.T) {
	t.Parallel()
	f := Function{ID: "v1", Platform: GCFv1, EventType: "providers/cloud.firestore/eventTypes/document.write",
		EventFilters: map[string]string{"resource": "projects/demo-p/databases/(default)/documents/rooms/{room}/msgs/{id}"}}
	ev := fsCommit("rooms/r1/msgs/m1", nil, map[string]any{"text": "hi"}, alice)
	ds, err := Deliveries(f, ev, testEnv)
	if err != nil || len(ds) != 1 {
		t.Fatalf("%v %v", ds, err)
	}
	m := decodeJSON(t, ds[0].Payload)
	for k, want := range map[string]any{
		"context.eventType":                  "providers/cloud.firestore/eventTypes/document.write",
		"context.resource":                   "projects/demo-p/databases/(default)/documents/rooms/r1/msgs/m1",
		"context.params.room":                "r1",
		"context.params.id":                  "m1",
		"context.timestamp":                  "2026-12-06T10:00:00.123456Z",
		"data.value.fields.text.stringValue": "hi",
		"data.value.name":                    "projects/demo-p/databases/(default)/documents/rooms/r1/msgs/m1",
	} {
		if got := get(m, k); !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", k, got, want)
		}
	}
	if got := get(m, "data.oldValue"); !reflect.DeepEqual(got, map[string]any{}) {
		t.Errorf("oldValue of a create = %v, want {}", got)
	}
}

// decodeFirestoreV2 decodes a v2 Firestore event with its data_base64
// decoded into data (firestoreEventData).
func decodeFirestoreV2(t *testing.T, payload []byte) map[string]any {
	t.Helper()
	m := decodeJSON(t, payload)
	if _, ok := m["data"]; ok {
		t.Errorf("a v2 Firestore event has JSON data: %v", m["data"])
	}
	data, err := firestoreEventData(fmt.Sprint(m["data_base64"]))
	if err != nil {
		t.Fatal(err)
	}
	m["data"] = data
	return m
}

// firestoreEventData decodes the DocumentEventData protobuf — value (1),
// old_value (2), update_mask (3) — in base64 into the messages' JSON form.
func firestoreEventData(b64 string) (map[string]any, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("data_base64: %v", err)
	}
	data := map[string]any{}
	for len(raw) > 0 {
		num, typ, n := protowire.ConsumeTag(raw)
		if n < 0 || typ != protowire.BytesType {
			return nil, fmt.Errorf("DocumentEventData: bad tag")
		}
		raw = raw[n:]
		b, n := protowire.ConsumeBytes(raw)
		if n < 0 {
			return nil, fmt.Errorf("DocumentEventData: bad field %d", num)
		}
		raw = raw[n:]
		key := map[protowire.Number]string{1: "value", 2: "oldValue", 3: "updateMask"}[num]
		var msg proto.Message = &pb.Document{}
		if num == 3 {
			msg = &pb.DocumentMask{}
		}
		if key == "" {
			return nil, fmt.Errorf("DocumentEventData: unknown field %d", num)
		}
		if err := proto.Unmarshal(b, msg); err != nil {
			return nil, fmt.Errorf("DocumentEventData %s: %v", key, err)
		}
		j, _ := protojson.Marshal(msg)
		var v any
		json.Unmarshal(j, &v)
		data[key] = v
	}
	return data, nil
}
