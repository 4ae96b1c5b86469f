package trigger

import (
	"encoding/json"
	"reflect"
	"sort"
	"testing"

	"github.com/pyric/pyric/event"
)

func dbCommit(path string, before, after any, who event.Identity) event.Event {
	return event.Event{Kind: event.KindCommit, Service: "database", Path: path, Identity: who, At: t0,
		Commit: &event.Commit{RequestTime: t0, Before: before, After: after, Database: "demo-p-default-rtdb"}}
}

func dbV2(typ, ref string) Function {
	return Function{ID: "rt", Platform: GCFv2, EventType: "google.firebase.database.ref.v1." + typ, Region: "us-central1",
		EventFilterPathPatterns: map[string]string{"ref": ref, "instance": "*"}}
}

// refs returns the refs and the decoded payloads of deliveries.
func refs(t *testing.T, ds []Delivery) ([]string, []map[string]any) {
	t.Helper()
	var rs []string
	var ms []map[string]any
	for _, d := range ds {
		m := decodeJSON(t, d.Payload)
		ms = append(ms, m)
		r, _ := m["ref"].(string)
		if r == "" {
			r, _ = get(m, "context.resource").(string)
		}
		rs = append(rs, r)
	}
	return rs, ms
}

// TestDatabaseMatrix walks the rows of the seed's functions-rtdb matrix
// that a payload decides.
// conformance: functions.trigger.database.created-once, functions.trigger.database.wildcards, functions.trigger.database.auth
func TestDatabaseMatrix(t *testing.T) {
	t.Parallel()
	created := dbV2("created", "/cases/{caseId}/items/{itemId}")
	cases := []struct {
		name string
		f    Function
		ev   event.Event
		want []string // refs delivered
	}{
		{"#1 exact create", dbV2("created", "/status"), dbCommit("/status", nil, "up", admin), []string{"status"}},
		{"#2 update of a created value does not fire created", dbV2("created", "/status"), dbCommit("/status", "up", "down", admin), nil},
		{"#2 delete does not fire created", dbV2("created", "/status"), dbCommit("/status", "up", nil, admin), nil},
		{"#4 wildcard child", created, dbCommit("/cases/c1/items/alpha", nil, map[string]any{"v": json.Number("1")}, admin), []string{"cases/c1/items/alpha"}},
		{"#5 ancestor set creates each match", created, dbCommit("/cases/c2", nil,
			map[string]any{"title": "t", "items": map[string]any{"alpha": json.Number("1"), "beta": json.Number("2")}}, admin),
			[]string{"cases/c2/items/alpha", "cases/c2/items/beta"}},
		{"#5 only newly present matches", created, dbCommit("/cases/c3/items",
			map[string]any{"old": json.Number("1")}, map[string]any{"old": json.Number("1"), "new": json.Number("2")}, admin),
			[]string{"cases/c3/items/new"}},
		{"#7 one path of a multi-location update", created, dbCommit("/cases/c4/items/delta", nil, "d", admin), []string{"cases/c4/items/delta"}},
		{"written fires for delete", dbV2("written", "/status"), dbCommit("/status", "up", nil, admin), []string{"status"}},
		{"other path", dbV2("written", "/status"), dbCommit("/other", nil, "x", admin), nil},
	}
	for _, c := range cases {
		ds, err := Deliveries(c.f, c.ev, testEnv)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got, _ := refs(t, ds)
		sort.Strings(got)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: delivered %v, want %v", c.name, got, c.want)
		}
	}
	// #6 projection: the snapshot is the matched descendant's value only,
	// and params are the match's.
	ds, _ := Deliveries(dbV2("created", "/cases/{caseId}/items/{itemId}/leaf"), dbCommit("/cases/c5", nil,
		map[string]any{"items": map[string]any{"alpha": map[string]any{"leaf": "L", "sibling": "S"}}}, alice), testEnv)
	if len(ds) != 1 {
		t.Fatalf("projection: %d deliveries", len(ds))
	}
	m := decodeJSON(t, ds[0].Payload)
	for k, want := range map[string]any{"ref": "cases/c5/items/alpha/leaf", "data.delta": "L", "data.data": nil,
		"instance": "demo-p-default-rtdb", "firebasedatabasehost": "firebaseio.com", "authtype": "app_user", "authid": "alice",
		"source": "//firebasedatabase.googleapis.com/projects/_/locations/us-central1/instances/demo-p-default-rtdb",
		"type":   "google.firebase.database.ref.v1.created", "subject": "refs/cases/c5/items/alpha/leaf"} {
		if got := get(m, k); !reflect.DeepEqual(got, want) {
			t.Errorf("projection %s = %#v, want %#v", k, got, want)
		}
	}
	if !reflect.DeepEqual(ds[0].Params, map[string]string{"caseId": "c5", "itemId": "alpha"}) {
		t.Errorf("params %v", ds[0].Params)
	}
	// #10 an admin write: no authtype (firebase-functions says "unknown").
	ds, _ = Deliveries(dbV2("created", "/status"), dbCommit("/status", nil, "up", admin), testEnv)
	if m := decodeJSON(t, ds[0].Payload); m["authtype"] != nil || m["authid"] != nil {
		t.Errorf("admin write carries authtype %v authid %v", m["authtype"], m["authid"])
	}
	// A write below the watched location is reported, not mis-delivered.
	if _, err := Deliveries(dbV2("written", "/users/{uid}"), dbCommit("/users/u1/name", nil, "n", admin), testEnv); err == nil {
		t.Errorf("a write below a watched location gave no error")
	}
	// Another instance does not fire an exact-instance function.
	f := dbV2("written", "/status")
	f.EventFilterPathPatterns = map[string]string{"ref": "/status"}
	f.EventFilters = map[string]string{"instance": "other-db"}
	if ds, _ := Deliveries(f, dbCommit("/status", nil, "x", admin), testEnv); len(ds) != 0 {
		t.Errorf("fired for another instance")
	}
}

// TestDatabaseDelta: firebase-functions computes after = applyChange(data,
// delta); the delta must make that the real after value.
func TestDatabaseDelta(t *testing.T) {
	t.Parallel()
	before := map[string]any{"a": json.Number("1"), "gone": "x", "nested": map[string]any{"k": "v", "drop": true}}
	after := map[string]any{"a": json.Number("2"), "nested": map[string]any{"k": "v"}, "new": "n"}
	got := applyChange(before, delta(before, after))
	if !reflect.DeepEqual(got, after) {
		t.Fatalf("applyChange(before, delta) = %v, want %v", got, after)
	}
}

// applyChange is firebase-functions 7.4.0's (common/utilities/utils.ts).
func applyChange(src, dest any) any {
	dm, dok := dest.(map[string]any)
	sm, sok := src.(map[string]any)
	if !dok || !sok {
		return dest
	}
	res := map[string]any{}
	for k, v := range sm {
		if _, ok := dm[k]; !ok && v != nil {
			res[k] = v
		}
	}
	for k, v := range dm {
		if v == nil {
			continue
		}
		res[k] = applyChange(sm[k], v)
	}
	return res
}

func TestDatabaseV1Payload(t *testing.T) {
	t.Parallel()
	f := Function{ID: "v1", Platform: GCFv1, EventType: "providers/google.firebase.database/eventTypes/ref.update",
		EventFilters: map[string]string{"resource": "projects/_/instances/demo-p-default-rtdb/refs/users/{uid}"}}
	ds, err := Deliveries(f, dbCommit("/users/u1", map[string]any{"n": "a"}, map[string]any{"n": "b"}, alice), testEnv)
	if err != nil || len(ds) != 1 {
		t.Fatalf("%v %v", ds, err)
	}
	m := decodeJSON(t, ds[0].Payload)
	for k, want := range map[string]any{
		"context.resource": "projects/_/instances/demo-p-default-rtdb/refs/users/u1", "context.params.uid": "u1",
		"context.eventType":         "providers/google.firebase.database/eventTypes/ref.update",
		"context.auth.variable.uid": "alice", "context.auth.variable.token.email": "a@x.com",
		"data.data.n": "a", "data.delta.n": "b",
	} {
		if got := get(m, k); !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", k, got, want)
		}
	}
	ds, _ = Deliveries(f, dbCommit("/users/u1", "x", "y", admin), testEnv)
	if got := get(decodeJSON(t, ds[0].Payload), "context.auth.admin"); got != true {
		t.Errorf("admin write: context.auth.admin = %v", got)
	}
}

func storageEvent(op string, prev, cur map[string]any) event.Event {
	m := &event.Mutation{Op: op, Project: "demo-p"}
	if prev != nil {
		m.Previous = prev
	}
	if cur != nil {
		m.Current = cur
	}
	return event.Event{Kind: event.KindMutation, Service: "storage", Path: "img/a b.png", At: t0, Mutation: m}
}

func object(gen int64) map[string]any {
	return map[string]any{"bucket": "demo-p.appspot.com", "name": "img/a b.png", "size": int64(3), "contentType": "image/png",
		"generation": gen, "metageneration": int64(1), "md5Hash": "MD5", "crc32c": "CRC", "metadata": map[string]string{"k": "v"},
		"downloadTokens": "tok", "timeCreated": "2026-12-06T10:00:00Z", "updated": "2026-12-06T10:00:01Z"}
}

func TestStoragePayloads(t *testing.T) {
	t.Parallel()
	v2 := func(a string) Function {
		return Function{ID: "s2", Platform: GCFv2, EventType: "google.cloud.storage.object.v1." + a, EventFilters: map[string]string{"bucket": "demo-p.appspot.com"}}
	}
	v1 := func(a string) Function {
		return Function{ID: "s1", Platform: GCFv1, EventType: "google.storage.object." + a, EventFilters: map[string]string{"resource": "projects/_/buckets/demo-p.appspot.com"}}
	}
	put := storageEvent("object_put", nil, object(7))
	ds, err := Deliveries(v2("finalized"), put, testEnv)
	if err != nil || len(ds) != 1 {
		t.Fatalf("%v %v", ds, err)
	}
	m := decodeJSON(t, ds[0].Payload)
	for k, want := range map[string]any{
		"source": "//storage.googleapis.com/projects/_/buckets/demo-p.appspot.com", "subject": "objects/img/a b.png",
		"bucket": "demo-p.appspot.com", "time": "2026-12-06T10:00:01Z",
		"data.kind": "storage#object", "data.generation": "7", "data.size": "3", "data.metageneration": "1",
		"data.id": "demo-p.appspot.com/img/a b.png/7", "data.metadata.k": "v", "data.metadata.firebaseStorageDownloadTokens": "tok",
		"data.storageClass": "STANDARD", "data.contentType": "image/png",
		"data.selfLink":  "http://127.0.0.1:9199/storage/v1/b/demo-p.appspot.com/o/img%2Fa%20b.png",
		"data.mediaLink": "http://127.0.0.1:9199/download/storage/v1/b/demo-p.appspot.com/o/img%2Fa%20b.png?generation=7&alt=media",
	} {
		if got := get(m, k); !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", k, got, want)
		}
	}
	if e, _ := get(m, "data.etag").(string); e == "" {
		t.Errorf("no etag")
	}
	// Overwrite: finalized for the new generation, deleted for the old.
	over := storageEvent("object_put", object(6), object(7))
	for a, gen := range map[string]string{"finalized": "7", "deleted": "6"} {
		ds, _ := Deliveries(v2(a), over, testEnv)
		if len(ds) != 1 || get(decodeJSON(t, ds[0].Payload), "data.generation") != gen {
			t.Errorf("overwrite %s: %d deliveries", a, len(ds))
		}
	}
	ds, _ = Deliveries(v1("metadataUpdate"), storageEvent("metadata_update", object(7), object(7)), testEnv)
	if len(ds) != 1 {
		t.Fatalf("v1 metadataUpdate: %d", len(ds))
	}
	m = decodeJSON(t, ds[0].Payload)
	for k, want := range map[string]any{"context.eventType": "google.storage.object.metadataUpdate",
		"context.resource.name": "projects/_/buckets/demo-p.appspot.com/objects/img/a b.png", "context.resource.service": "storage.googleapis.com",
		"context.resource.type": "storage#object", "data.name": "img/a b.png"} {
		if got := get(m, k); !reflect.DeepEqual(got, want) {
			t.Errorf("v1 %s = %#v, want %#v", k, got, want)
		}
	}
	other := v2("finalized")
	other.EventFilters = map[string]string{"bucket": "other"}
	if ds, _ := Deliveries(other, put, testEnv); len(ds) != 0 {
		t.Errorf("fired for another bucket")
	}
	if ds, _ := Deliveries(v2("deleted"), put, testEnv); len(ds) != 0 {
		t.Errorf("deleted fired for a new object")
	}
}

func TestAuthPayloads(t *testing.T) {
	t.Parallel()
	user := map[string]any{"localId": "u1", "email": "a@x.com", "emailVerified": true, "displayName": "Al",
		"createdAt": "1700000000000", "lastLoginAt": "1700000001000", "customAttributes": `{"role":"admin"}`,
		"providerUserInfo": []any{map[string]any{"providerId": "password", "rawId": "a@x.com", "email": "a@x.com", "federatedId": "a@x.com"}}}
	create := event.Event{Kind: event.KindMutation, Service: "auth", Path: "u1", At: t0, Mutation: &event.Mutation{Op: "user_create", Project: "demo-p", Current: user}}
	v1 := Function{ID: "a1", Platform: GCFv1, EventType: "providers/firebase.auth/eventTypes/user.create", EventFilters: map[string]string{"resource": "projects/demo-p"}}
	ds, err := Deliveries(v1, create, testEnv)
	if err != nil || len(ds) != 1 {
		t.Fatalf("%v %v", ds, err)
	}
	m := decodeJSON(t, ds[0].Payload)
	for k, want := range map[string]any{"data.uid": "u1", "data.email": "a@x.com", "data.emailVerified": true, "data.disabled": false,
		"data.customClaims.role": "admin", "data.metadata.creationTime": "2023-11-14T22:13:20.000Z", "data.metadata.lastSignInTime": "2023-11-14T22:13:21.000Z",
		"context.eventType": "providers/firebase.auth/eventTypes/user.create", "context.resource": "projects/demo-p"} {
		if got := get(m, k); !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", k, got, want)
		}
	}
	if pd, _ := get(m, "data.providerData").([]any); len(pd) != 1 || pd[0].(map[string]any)["rawId"] != "a@x.com" {
		t.Errorf("providerData %v", get(m, "data.providerData"))
	}
	del := event.Event{Kind: event.KindMutation, Service: "auth", Path: "u1", At: t0, Mutation: &event.Mutation{Op: "user_delete", Project: "demo-p", Previous: user}}
	if ds, _ := Deliveries(v1, del, testEnv); len(ds) != 0 {
		t.Errorf("user.create fired for a delete")
	}
	v2 := Function{ID: "a2", Platform: GCFv2, EventType: "google.firebase.auth.user.v2.deleted"}
	ds, _ = Deliveries(v2, del, testEnv)
	if len(ds) != 1 {
		t.Fatalf("v2 deleted: %d", len(ds))
	}
	m = decodeJSON(t, ds[0].Payload)
	for k, want := range map[string]any{"source": "//identitytoolkit.googleapis.com/projects/demo-p", "subject": "users/u1",
		"data.oldValue.uid": "u1", "data.oldValue.metadata.createTime": "2023-11-14T22:13:20.000Z"} {
		if got := get(m, k); !reflect.DeepEqual(got, want) {
			t.Errorf("v2 %s = %#v, want %#v", k, got, want)
		}
	}
	imp := create
	imp.Mutation = &event.Mutation{Op: "user_create", Project: "demo-p", Current: user, Note: "import"}
	if ds, _ := Deliveries(v1, imp, testEnv); len(ds) != 0 {
		t.Errorf("an import fired user.create")
	}
}
