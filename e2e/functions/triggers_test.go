// Package functions_test runs e2e/functions/triggers — a codebase of
// event-triggered and blocking functions written with firebase-functions
// 7.4.0 and firebase-admin 14.5.1 — on pyric, and drives every trigger
// through the services' own wire APIs: each function records what it
// received in Firestore through the Admin SDK, which the test reads back.
package functions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/functions"
	"github.com/pyric/pyric/hosting"
	"github.com/pyric/pyric/internal/await"
	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/sandbox"
)

const project = "demo-pyric-triggers"

const openRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /{document=**} { allow read, write: if true; }
  }
}`

func startTriggers(t *testing.T) *backend.Backend {
	t.Helper()
	b := startTriggersBackend(t, false)
	var ids []string
	for _, ep := range b.Functions().Endpoints() {
		ids = append(ids, ep.ID)
	}
	if len(ids) != 20 {
		t.Fatalf("the triggers codebase loaded %v, want its 20 functions", ids)
	}
	return b
}

// startTriggersBackend starts the triggers codebase; with background its
// functions load while the ports already serve, as in pyric serve.
func startTriggersBackend(t *testing.T, background bool) *backend.Backend {
	t.Helper()
	t.Setenv("PATH", e2etest.NeedFunctions(t))
	cbs, err := functions.ParseConfig(json.RawMessage(`[{"source":"triggers","codebase":"triggers"}]`), e2etest.FunctionsDir())
	if err != nil {
		t.Fatal(err)
	}
	// A Hosting site whose rewrites reach the codebase's HTTPS function.
	site := t.TempDir()
	if err := os.MkdirAll(filepath.Join(site, "public"), 0o755); err != nil {
		t.Fatal(err)
	}
	sites, err := hosting.ParseConfig(json.RawMessage(`{"public": "public", "rewrites": [
		{"source": "/api/**", "function": "page"},
		{"source": "/eu/**", "function": {"functionId": "page", "region": "europe-west1"}}]}`), site, project)
	if err != nil {
		t.Fatal(err)
	}
	b, err := backend.Start(backend.Options{
		Sandbox:       sandbox.Options{Project: project},
		Firestore:     backend.FirestoreOptions{Rules: openRules},
		DatabaseRules: `{"rules": {".read": true, ".write": true}}`,
		StorageRules:  "rules_version = '2';\nservice firebase.storage {\n  match /b/{bucket}/o {\n    match /{all=**} { allow read, write: if true; }\n  }\n}",
		Functions: backend.FunctionsOptions{Options: functions.Options{Codebases: cbs, Log: &testLog{t: t}, Poll: -1},
			LoadInBackground: background},
		Hosting: backend.HostingOptions{Sites: sites},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Shutdown(context.Background()) })
	return b
}

// TestEnqueueDuringLoad: a task enqueued, while the functions load, to
// the queue of a task function the load brings is accepted (the enqueue
// waits for the load) and runs once it has loaded.
func TestEnqueueDuringLoad(t *testing.T) {
	b := startTriggersBackend(t, true)
	select {
	case <-b.Functions().Loaded():
		t.Fatal("the functions loaded before the test's enqueue: it proves nothing")
	default:
	}
	tasksURL := fmt.Sprintf("http://%s/projects/%s/locations/us-central1/queues/processTask/tasks", b.Addr(backend.Tasks), project)
	early := mustJSON(map[string]any{"task": map[string]any{"name": "projects/" + project + "/locations/us-central1/queues/processTask/tasks/early",
		"httpRequest": map[string]any{"body": []byte(`{"data":{"n":5}}`)}}})
	if status, got := call(t, "POST", tasksURL, "owner", "application/json", early); status != 200 {
		t.Fatalf("enqueue during the load: %d %v", status, got)
	}
	want(t, "processTask early", seen(t, b, "processTask-early"), map[string]any{"queueName": "processTask", "id": "early", "n": 5})
}

type testLog struct{ t *testing.T }

func (l *testLog) Write(p []byte) (int, error) {
	l.t.Logf("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// call makes one HTTP request and decodes a JSON answer.
func call(t *testing.T, method, url, bearer, contentType string, body []byte) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(raw) > 0 && json.Unmarshal(raw, &out) != nil {
		out = map[string]any{"raw": string(raw)}
	}
	return resp.StatusCode, out
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// seen waits for the document a function records at seen/{id} and
// returns its fields as plain JSON values.
func seen(t *testing.T, b *backend.Backend, id string) map[string]any {
	t.Helper()
	url := fmt.Sprintf("http://%s/v1/projects/%s/databases/(default)/documents/seen/%s", b.Addr(backend.Firestore), project, id)
	var status int
	var doc map[string]any
	if !await.Poll(30*time.Second, func() bool {
		status, doc = call(t, "GET", url, "owner", "", nil)
		return status == 200
	}) {
		t.Fatalf("seen/%s never written (last answer %d %v)", id, status, doc)
	}
	return plain(doc["fields"]).(map[string]any)
}

// plain turns Firestore REST values into JSON values.
func plain(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 1 {
			for k, val := range x {
				switch k {
				case "stringValue", "booleanValue", "doubleValue", "integerValue", "timestampValue":
					return val
				case "nullValue":
					return nil
				case "mapValue":
					f, _ := val.(map[string]any)["fields"]
					if f == nil {
						return map[string]any{}
					}
					return plain(f)
				case "arrayValue":
					var out []any
					for _, e := range val.(map[string]any)["values"].([]any) {
						out = append(out, plain(e))
					}
					return out
				}
			}
		}
		out := map[string]any{}
		for k, val := range x {
			out[k] = plain(val)
		}
		return out
	}
	return v
}

func want(t *testing.T, what string, got map[string]any, fields map[string]any) {
	t.Helper()
	for k, w := range fields {
		if g := fmt.Sprint(got[k]); g != fmt.Sprint(w) {
			t.Errorf("%s: %s = %s, want %v (all: %v)", what, k, g, w, got)
		}
	}
}

// TestTriggers writes through each service and checks each function's
// delivery: the write → trigger → write chain.
func TestTriggers(t *testing.T) {
	b := startTriggers(t)
	fsURL := fmt.Sprintf("http://%s/v1/projects/%s/databases/(default)/documents", b.Addr(backend.Firestore), project)
	authURL := "http://" + b.Addr(backend.Auth)

	t.Run("firestore v2 created and updated", func(t *testing.T) {
		body := mustJSON(map[string]any{"fields": map[string]any{
			"status": map[string]any{"stringValue": "new"},
			"items": map[string]any{"arrayValue": map[string]any{"values": []any{
				map[string]any{"mapValue": map[string]any{"fields": map[string]any{"price": map[string]any{"integerValue": "3"}, "qty": map[string]any{"integerValue": "2"}}}},
				map[string]any{"mapValue": map[string]any{"fields": map[string]any{"price": map[string]any{"doubleValue": 1.5}, "qty": map[string]any{"integerValue": "4"}}}},
			}}}}})
		if status, out := call(t, "POST", fsURL+"/orders?documentId=o1", "owner", "application/json", body); status != 200 {
			t.Fatalf("create: %d %v", status, out)
		}
		got := seen(t, b, "totalOrder-o1")
		want(t, "totalOrder", got, map[string]any{
			"type": "google.cloud.firestore.document.v1.created", "document": "orders/o1",
			"source":  "//firestore.googleapis.com/projects/" + project + "/databases/(default)",
			"subject": "documents/orders/o1", "params": map[string]any{"orderId": "o1"}, "total": "12",
		})
		upd := mustJSON(map[string]any{"fields": map[string]any{"status": map[string]any{"stringValue": "paid"}}})
		if status, out := call(t, "PATCH", fsURL+"/orders/o1?updateMask.fieldPaths=status", "owner", "application/json", upd); status != 200 {
			t.Fatalf("update: %d %v", status, out)
		}
		want(t, "orderUpdated", seen(t, b, "orderUpdated-o1"), map[string]any{"before": "new", "after": "paid"})
	})

	t.Run("firestore v2 with auth context", func(t *testing.T) {
		status, user := call(t, "POST", authURL+"/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", "", "application/json",
			mustJSON(map[string]any{"email": "writer@ok.example", "password": "secret-123", "returnSecureToken": true}))
		if status != 200 {
			t.Fatalf("signUp: %d %v", status, user)
		}
		body := mustJSON(map[string]any{"fields": map[string]any{"n": map[string]any{"integerValue": "1"}}})
		if status, out := call(t, "POST", fsURL+"/audited?documentId=a1", user["idToken"].(string), "application/json", body); status != 200 {
			t.Fatalf("create as user: %d %v", status, out)
		}
		want(t, "auditWrites", seen(t, b, "auditWrites-a1"), map[string]any{"authType": "app_user", "authId": user["localId"], "exists": true})
	})

	t.Run("firestore v1 onWrite", func(t *testing.T) {
		body := mustJSON(map[string]any{"fields": map[string]any{"title": map[string]any{"stringValue": "old API"}}})
		if status, out := call(t, "POST", fsURL+"/legacy?documentId=l1", "owner", "application/json", body); status != 200 {
			t.Fatalf("create: %d %v", status, out)
		}
		want(t, "v1Write", seen(t, b, "v1Write-l1"), map[string]any{
			"eventType": "google.firestore.document.write", // the SDK names the legacy type so, as in production
			"resource":  "projects/" + project + "/databases/(default)/documents/legacy/l1",
			"before":    false, "after": map[string]any{"title": "old API"},
		})
	})

	t.Run("realtime database v2 and v1", func(t *testing.T) {
		dbURL := "http://" + b.Addr(backend.Database)
		ns := project + "-default-rtdb"
		if status, out := call(t, "PUT", dbURL+"/scores/ada.json?ns="+ns, "owner", "application/json", []byte(`{"points": 42}`)); status != 200 {
			t.Fatalf("put: %d %v", status, out)
		}
		want(t, "scoreCreated", seen(t, b, "scoreCreated-ada"), map[string]any{
			"value": map[string]any{"points": "42"}, "ref": "scores/ada", "instance": ns,
		})
		// A write below the watched location creates it: the function
		// sees the location's whole new value.
		if status, out := call(t, "PUT", dbURL+"/scores/zed/points.json?ns="+ns, "owner", "application/json", []byte(`7`)); status != 200 {
			t.Fatalf("put below: %d %v", status, out)
		}
		want(t, "scoreCreated below", seen(t, b, "scoreCreated-zed"), map[string]any{
			"value": map[string]any{"points": "7"}, "ref": "scores/zed",
		})
		// A multi-path update creating two players fires once per player.
		if status, out := call(t, "PATCH", dbURL+"/v1scores.json?ns="+ns, "owner", "application/json", []byte(`{"bob": 1, "cy": 2}`)); status != 200 {
			t.Fatalf("patch: %d %v", status, out)
		}
		want(t, "v1Score bob", seen(t, b, "v1Score-bob"), map[string]any{"value": "1", "key": "bob"})
		want(t, "v1Score cy", seen(t, b, "v1Score-cy"), map[string]any{"value": "2", "key": "cy"})
	})

	t.Run("storage v2 finalized", func(t *testing.T) {
		bucket := project + ".appspot.com"
		url := fmt.Sprintf("http://%s/upload/storage/v1/b/%s/o?uploadType=media&name=photos/cat.txt", b.Addr(backend.Storage), bucket)
		if status, out := call(t, "POST", url, "owner", "text/plain", []byte("meow")); status != 200 {
			t.Fatalf("upload: %d %v", status, out)
		}
		want(t, "uploaded", seen(t, b, "uploaded-photos_cat.txt"), map[string]any{
			"name": "photos/cat.txt", "bucket": bucket, "contentType": "text/plain", "size": "4",
		})
	})

	t.Run("auth onCreate and blocking beforeUserCreated", func(t *testing.T) {
		signUp := authURL + "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k"
		status, out := call(t, "POST", signUp, "", "application/json",
			mustJSON(map[string]any{"email": "mallory@blocked.example", "password": "secret-123", "returnSecureToken": true}))
		msg, _ := out["error"].(map[string]any)["message"].(string)
		if status != 400 || !strings.Contains(msg, "BLOCKING_FUNCTION_ERROR_RESPONSE") || !strings.Contains(msg, "Sign-ups from blocked.example are closed.") {
			t.Fatalf("blocked sign-up: %d %v", status, out)
		}
		status, user := call(t, "POST", signUp, "", "application/json",
			mustJSON(map[string]any{"email": "grace@ok.example", "password": "secret-123", "returnSecureToken": true}))
		if status != 200 {
			t.Fatalf("sign-up: %d %v", status, user)
		}
		uid := user["localId"].(string)
		status, look := call(t, "POST", authURL+"/identitytoolkit.googleapis.com/v1/projects/"+project+"/accounts:lookup", "owner", "application/json",
			mustJSON(map[string]any{"localId": []string{uid}}))
		if status != 200 {
			t.Fatalf("lookup: %d %v", status, look)
		}
		u := look["users"].([]any)[0].(map[string]any)
		if u["displayName"] != "Checked grace" || u["customAttributes"] != `{"role":"member"}` {
			t.Errorf("the blocking function's changes are not on the account: %v", u)
		}
		want(t, "newUser", seen(t, b, "newUser-"+uid), map[string]any{"email": "grace@ok.example"})
	})

	t.Run("hosting rewrites to a function", func(t *testing.T) {
		host := b.Addr(backend.Hosting)
		status, got := call(t, "GET", "http://"+host+"/api/items/7?x=1", "", "", nil)
		if status != 200 || got["path"] != "/api/items/7" || got["url"] != "/api/items/7?x=1" || got["forwardedHost"] != host {
			t.Errorf("rewrite to page: %d %v", status, got)
		}
		// The function is not deployed in europe-west1: Hosting's 404.
		if status, got := call(t, "GET", "http://"+host+"/eu/x", "", "", nil); status != 404 {
			t.Errorf("rewrite to a function in another region: %d %v, want 404", status, got)
		}
	})

	t.Run("task queue through the Admin SDK", func(t *testing.T) {
		fnURL := fmt.Sprintf("http://%s/%s/us-central1/enqueueWork", b.Addr(backend.Functions), project)
		if status, got := call(t, "GET", fnURL+"?id=t1&n=7", "", "", nil); status != 200 || got["enqueued"] != "t1" {
			t.Fatalf("enqueue t1: %d %v", status, got)
		}
		want(t, "processTask t1", seen(t, b, "processTask-t1"), map[string]any{
			"queueName": "processTask", "id": "t1", "retryCount": 0, "executionCount": 0, "previousResponse": nil, "n": 7})
		// The first attempt throws (500): retried after the backoff,
		// with the previous answer; a 5xx is not counted as an execution.
		if status, got := call(t, "GET", fnURL+"?id=t2&n=8&failOnce=1", "", "", nil); status != 200 {
			t.Fatalf("enqueue t2: %d %v", status, got)
		}
		want(t, "processTask t2", seen(t, b, "processTask-t2"), map[string]any{
			"id": "t2", "retryCount": 1, "executionCount": 0, "previousResponse": 500, "n": 8})
		// A name that ran is taken (Cloud Tasks' deduplication):
		// firebase-admin reports task-already-exists.
		if status, got := call(t, "GET", fnURL+"?id=t1", "", "", nil); status != 409 || got["code"] != "functions/task-already-exists" {
			t.Errorf("enqueue t1 again: %d %v", status, got)
		}
		tasksURL := fmt.Sprintf("http://%s/projects/%s/locations/us-central1/queues/", b.Addr(backend.Tasks), project)
		// A delayed task waits, can be listed and deleted, and never runs.
		later := mustJSON(map[string]any{"task": map[string]any{"name": "projects/" + project + "/locations/us-central1/queues/processTask/tasks/late",
			"scheduleTime": time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "httpRequest": map[string]any{"body": []byte(`{"data":{"n":9}}`)}}})
		if status, got := call(t, "POST", tasksURL+"processTask/tasks", "owner", "application/json", later); status != 200 || got["name"] == nil || got["dispatchCount"] != float64(0) {
			t.Fatalf("create late: %d %v", status, got)
		}
		if status, got := call(t, "GET", tasksURL+"processTask/tasks", "owner", "", nil); status != 200 || len(got["tasks"].([]any)) != 1 {
			t.Errorf("list: %d %v", status, got)
		}
		if status, got := call(t, "DELETE", tasksURL+"processTask/tasks/late", "owner", "", nil); status != 200 {
			t.Errorf("delete late: %d %v", status, got)
		}
		if status, got := call(t, "DELETE", tasksURL+"processTask/tasks/late", "owner", "", nil); status != 404 || got["error"].(map[string]any)["status"] != "NOT_FOUND" {
			t.Errorf("delete late again: %d %v", status, got)
		}
		// A queue no task function names, and bad requests.
		for _, c := range []struct {
			url, body, status string
			code              int
		}{
			{tasksURL + "nothere/tasks", `{"task":{"httpRequest":{}}}`, "NOT_FOUND", 404},
			{tasksURL + "enqueueWork/tasks", `{"task":{"httpRequest":{}}}`, "NOT_FOUND", 404},
			{tasksURL + "processTask/tasks", `{"task":`, "INVALID_ARGUMENT", 400},
			{tasksURL + "processTask/tasks", `{}`, "INVALID_ARGUMENT", 400},
			{tasksURL + "processTask/tasks", `{"task":{"name":"projects/` + project + `/locations/us-central1/queues/processTask/tasks/a.b","httpRequest":{}}}`, "INVALID_ARGUMENT", 400},
			{tasksURL + "processTask/tasks", `{"task":{"dispatchDeadline":"5s","httpRequest":{}}}`, "INVALID_ARGUMENT", 400},
		} {
			status, got := call(t, "POST", c.url, "owner", "application/json", []byte(c.body))
			if status != c.code || got["error"] == nil || got["error"].(map[string]any)["status"] != c.status {
				t.Errorf("POST %s %s: %d %v, want %d %s", c.url, c.body, status, got, c.code, c.status)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := b.Functions().TasksIdle(ctx); err != nil {
			t.Errorf("the queue never emptied: %v (%v)", err, b.Functions().Tasks())
		}
	})

	// conformance: functions.handler.errors
	t.Run("a handler that throws is reported once", func(t *testing.T) {
		body := mustJSON(map[string]any{"fields": map[string]any{"x": map[string]any{"integerValue": "1"}}})
		if status, out := call(t, "POST", fsURL+"/failing?documentId=f1", "owner", "application/json", body); status != 200 {
			t.Fatalf("create: %d %v", status, out)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := b.Functions().TriggersIdle(ctx); err != nil {
			t.Fatal(err)
		}
		var runs []*event.Invocation
		for _, e := range b.Sandbox.Events().History() {
			if e.Invocation != nil && e.Invocation.Function == "failingTrigger" {
				runs = append(runs, e.Invocation)
			}
		}
		if len(runs) != 1 || runs[0].Outcome != "error" {
			t.Fatalf("failingTrigger ran %d times (%+v), want once with outcome error", len(runs), runs)
		}
		logs := fmt.Sprint(runs[0].Logs)
		if !strings.Contains(logs, "failingTrigger refuses") {
			t.Errorf("the invocation's logs do not carry the error: %s", logs)
		}
	})

	// conformance: functions.trigger.firestore.named-db
	t.Run("a trigger on a named database", func(t *testing.T) {
		body := mustJSON(map[string]any{"fields": map[string]any{"x": map[string]any{"integerValue": "1"}}})
		otherURL := fmt.Sprintf("http://%s/v1/projects/%s/databases/other/documents", b.Addr(backend.Firestore), project)
		if status, out := call(t, "POST", fsURL+"/named?documentId=indefault", "owner", "application/json", body); status != 200 {
			t.Fatalf("create in (default): %d %v", status, out)
		}
		if status, out := call(t, "POST", otherURL+"/named?documentId=inother", "owner", "application/json", body); status != 200 {
			t.Fatalf("create in other: %d %v", status, out)
		}
		want(t, "namedDbCreated", seen(t, b, "namedDbCreated-inother"), map[string]any{"database": "other", "document": "named/inother"})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := b.Functions().TriggersIdle(ctx); err != nil {
			t.Fatal(err)
		}
		url := fmt.Sprintf("http://%s/v1/projects/%s/databases/(default)/documents/seen/namedDbCreated-indefault", b.Addr(backend.Firestore), project)
		if status, _ := call(t, "GET", url, "owner", "", nil); status != 404 {
			t.Errorf("the named-database trigger fired for a (default) write: %d", status)
		}
	})

	// conformance: functions.trigger.eventarc
	t.Run("eventarc custom events through the Admin SDK", func(t *testing.T) {
		fnURL := fmt.Sprintf("http://%s/%s/us-central1/publishEvent", b.Addr(backend.Functions), project)
		events := []map[string]any{
			{"type": "com.example.order.shipped", "id": "ship-ups", "source": "shop/orders", "subject": "orders/o9",
				"time": "2026-12-06T10:00:00.000Z", "carrier": "ups", "data": map[string]any{"orderId": "o9", "items": 2}},
			// filtered out by orderShipped's carrier filter
			{"type": "com.example.order.shipped", "id": "ship-fedex", "source": "shop/orders", "carrier": "fedex", "data": map[string]any{"orderId": "o10"}},
			// a type no function on the channel takes
			{"type": "com.example.order.lost", "id": "lost-1", "source": "shop/orders", "data": "gone"},
		}
		if status, got := call(t, "POST", fnURL, "", "application/json", mustJSON(map[string]any{"events": events})); status != 200 || got["published"] != float64(3) {
			t.Fatalf("publish: %d %v", status, got)
		}
		// The CloudEvent production delivers (firebase-functions'
		// CloudEvent<T>: attributes at the top level, the extension
		// attribute beside them, JSON data parsed) — exactly these keys.
		got := seen(t, b, "orderShipped-ship-ups")["event"].(map[string]any)
		wantEvent := map[string]any{"specversion": "1.0", "id": "ship-ups", "type": "com.example.order.shipped", "source": "shop/orders",
			"subject": "orders/o9", "time": "2026-12-06T10:00:00.000Z", "datacontenttype": "application/json", "carrier": "ups",
			"data": map[string]any{"orderId": "o9", "items": float64(2)}}
		if fmt.Sprint(got) != fmt.Sprint(wantEvent) {
			t.Errorf("orderShipped received\n%v\nwant\n%v", got, wantEvent)
		}
		// A text event on a channel named by its id alone (the
		// function's region), without a time: Eventarc stamps it.
		ping := []map[string]any{{"type": "com.example.ping", "id": "ping-1", "source": "ops", "data": "hello"}}
		if status, got := call(t, "POST", fnURL, "", "application/json", mustJSON(map[string]any{"channel": "audit", "events": ping})); status != 200 {
			t.Fatalf("publish to audit: %d %v", status, got)
		}
		p := seen(t, b, "auditPing-ping-1")["event"].(map[string]any)
		if p["data"] != "hello" || p["datacontenttype"] != "text/plain" || p["type"] != "com.example.ping" || p["source"] != "ops" {
			t.Errorf("auditPing received %v", p)
		}
		if _, err := time.Parse(time.RFC3339, fmt.Sprint(p["time"])); err != nil {
			t.Errorf("auditPing's event time %v: %v", p["time"], err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := b.Functions().TriggersIdle(ctx); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"orderShipped-ship-fedex", "orderShipped-lost-1", "auditPing-ship-ups"} {
			url := fmt.Sprintf("http://%s/v1/projects/%s/databases/(default)/documents/seen/%s", b.Addr(backend.Firestore), project, id)
			if status, _ := call(t, "GET", url, "owner", "", nil); status != 404 {
				t.Errorf("%s was delivered: the channel, type or filters did not hold", id)
			}
		}
		// Each delivery is an invocation caused by the publish's event.
		publishes := map[string]bool{}
		invoked := 0
		for _, e := range b.Sandbox.Events().History() {
			if e.Service == "eventarc" && e.Kind == event.KindMutation {
				publishes[e.ID] = true
			}
			if e.Invocation != nil && (e.Invocation.Function == "orderShipped" || e.Invocation.Function == "auditPing") {
				invoked++
				if !publishes[e.Invocation.CauseEventID] || e.Invocation.TriggerType == "" {
					t.Errorf("%s's invocation names cause %q, not a publish (%v)", e.Invocation.Function, e.Invocation.CauseEventID, publishes)
				}
			}
		}
		if invoked != 2 {
			t.Errorf("%d custom event invocations, want 2", invoked)
		}
		// The publishes were made by publishEvent's runs, which list them.
		for _, e := range b.Sandbox.Events().History() {
			if e.Invocation != nil && e.Invocation.Function == "publishEvent" && e.Invocation.Outcome == "ok" {
				if len(e.Invocation.Writes) != 1 || !publishes[e.Invocation.Writes[0]] {
					t.Errorf("publishEvent's run %s lists writes %v, want its publish", e.Invocation.InvocationID, e.Invocation.Writes)
				}
			}
		}
		// Bad input: Eventarc's status, a message naming the event and
		// the field.
		arc := "http://" + b.Addr(backend.Eventarc)
		channel := "/projects/" + project + "/locations/us-central1/channels/firebase:publishEvents"
		ev := func(extra string) string {
			return `{"events":[{"@type":"type.googleapis.com/io.cloudevents.v1.CloudEvent","id":"x","source":"s","specVersion":"1.0"` + extra + `}]}`
		}
		for _, c := range []struct {
			path, body, status string
			code               int
			msg                string
		}{
			{channel, ev(``), "INVALID_ARGUMENT", 400, "events[0]: CloudEvent 'type' is required"},
			{channel, ev(`,"type":"t","textData":"{","attributes":{"datacontenttype":{"ceString":"application/json"}}`), "INVALID_ARGUMENT", 400, "textData is not the JSON"},
			{channel, ev(`,"type":"t","attributes":{"Bad-Name":{"ceString":"x"}}`), "INVALID_ARGUMENT", 400, `attribute "Bad-Name"`},
			{channel, ev(`,"type":"t","attributes":{"n":{"ceFloat":1}}`), "INVALID_ARGUMENT", 400, `unknown attribute value "ceFloat"`},
			{channel, `{"events":`, "INVALID_ARGUMENT", 400, "Invalid JSON payload"},
			{channel, `{"events":[]}`, "INVALID_ARGUMENT", 400, "events is empty"},
			{"/projects/" + project + "/locations/us-central1/channels/a.b:publishEvents", ev(`,"type":"t"`), "INVALID_ARGUMENT", 400, "invalid channel name"},
			{"/projects/" + project + "/topics/t:publish", ev(`,"type":"t"`), "NOT_FOUND", 404, "not an Eventarc channel"},
		} {
			status, got := call(t, "POST", arc+c.path, "owner", "application/json", []byte(c.body))
			e, _ := got["error"].(map[string]any)
			if status != c.code || e == nil || e["status"] != c.status || !strings.Contains(fmt.Sprint(e["message"]), c.msg) {
				t.Errorf("POST %s %s: %d %v, want %d %s %q", c.path, c.body, status, got, c.code, c.status, c.msg)
			}
		}
		// firebase-admin's own checks run before the request: its error
		// reaches the function.
		if status, got := call(t, "POST", fnURL, "", "application/json", mustJSON(map[string]any{"events": []map[string]any{{"type": "t", "data": 1}}})); status != 400 || got["code"] != "eventarc/invalid-argument" {
			t.Errorf("publish of an event without source: %d %v", status, got)
		}
	})

	// conformance: functions.trigger.eventarc.native
	t.Run("eventarc native route, trigger list and registrations", func(t *testing.T) {
		arc := "http://" + b.Addr(backend.Eventarc)
		// The triggers the port delivers to, keyed as firebase-tools keys
		// them (TYPE-CHANNEL), named by the functions port's trigger route.
		status, list := call(t, "GET", arc+"/google/getTriggers", "", "", nil)
		wantList := map[string]string{
			"google.firebase.firebasealerts.alerts.v1.published-google":                                  `[map[eventTrigger:map[eventFilters:map[alerttype:crashlytics.newFatalIssue] eventType:google.firebase.firebasealerts.alerts.v1.published service:firebasealerts.googleapis.com] projectId:` + project + ` triggerName:us-central1-fatalIssue]]`,
			"com.example.order.shipped-projects/" + project + "/locations/us-central1/channels/firebase": `[map[eventTrigger:map[channel:projects/` + project + `/locations/us-central1/channels/firebase eventFilters:map[carrier:ups] eventType:com.example.order.shipped service:eventarc.googleapis.com] projectId:` + project + ` triggerName:us-central1-orderShipped]]`,
		}
		if status != 200 || len(list) != 3 {
			t.Errorf("getTriggers: %d %v, want the 3 Eventarc functions", status, list)
		}
		for k, w := range wantList {
			if g := fmt.Sprint(list[k]); g != w {
				t.Errorf("getTriggers[%s] = %s, want %s", k, g, w)
			}
		}
		// A Firebase Alert as Google publishes it, from a browser page
		// (the route answers CORS): delivered exactly as posted, to the
		// function whose alert type it has.
		fatal := map[string]any{"specversion": "1.0", "id": "alert-1", "source": "//firebasealerts.googleapis.com/projects/123",
			"type": "google.firebase.firebasealerts.alerts.v1.published", "alerttype": "crashlytics.newFatalIssue", "appid": "1:123:web:abc",
			"time": "2026-12-07T00:00:00Z", "data": map[string]any{"@type": "type.googleapis.com/google.events.firebase.firebasealerts.v1.AlertData",
				"createTime": "2026-12-07T00:00:00Z", "endTime": "2026-12-07T00:00:00Z",
				"payload": map[string]any{"@type": "type.googleapis.com/google.events.firebase.firebasealerts.v1.CrashlyticsNewFatalIssuePayload",
					"issue": map[string]any{"id": "issue-7", "title": "NPE", "subtitle": "Main.java", "appVersion": "1.2"}}}}
		billing := map[string]any{"specversion": "1.0", "id": "alert-2", "source": "//firebasealerts.googleapis.com/projects/123",
			"type": "google.firebase.firebasealerts.alerts.v1.published", "alerttype": "billing.planUpdate", "data": map[string]any{}}
		req, _ := http.NewRequest("POST", arc+"/google/publishEvents", bytes.NewReader(mustJSON(map[string]any{"events": []any{fatal, billing}})))
		req.Header.Set("Origin", "http://localhost:5173")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(raw) != "OK" || resp.Header.Get("Access-Control-Allow-Origin") != "http://localhost:5173" {
			t.Fatalf("native publish: %d %q (allow-origin %q)", resp.StatusCode, raw, resp.Header.Get("Access-Control-Allow-Origin"))
		}
		// The handler's event is the posted one plus the camel-case
		// copies firebase-functions adds (alertType, appId), as under
		// firebase-tools 15.34.2 with the same request.
		wantAlert := map[string]any{"alertType": "crashlytics.newFatalIssue", "appId": "1:123:web:abc"}
		for k, v := range fatal {
			wantAlert[k] = v
		}
		got := seen(t, b, "fatalIssue-alert-1")
		if fmt.Sprint(got["event"]) != fmt.Sprint(wantAlert) || got["issueId"] != "issue-7" {
			t.Errorf("fatalIssue received\n%v\nwant\n%v", got["event"], wantAlert)
		}
		// Bad input: the request is refused whole, naming the event.
		for _, c := range []struct {
			method, body string
			code         int
			msg          string
		}{
			{"POST", `{"events":[{"type":"google.firebase.firebasealerts.alerts.v1.published","id":"alert-3","alerttype":"crashlytics.newFatalIssue"},{"id":"x"}]}`, 400, "events[1]: CloudEvent 'type' is required"},
			{"POST", `{"events":["x"]}`, 400, "events[0]: not a CloudEvent"},
			{"POST", `{}`, 400, `has no "events"`},
			{"POST", `{"events":`, 400, "Invalid JSON payload"},
			{"GET", ``, 405, "use POST"},
		} {
			status, got := call(t, c.method, arc+"/google/publishEvents", "", "application/json", []byte(c.body))
			e, _ := got["error"].(map[string]any)
			if status != c.code || e == nil || !strings.Contains(fmt.Sprint(e["message"]), c.msg) {
				t.Errorf("%s /google/publishEvents %s: %d %v, want %d %q", c.method, c.body, status, got, c.code, c.msg)
			}
		}

		// A trigger registered as firebase-tools' functions emulator
		// registers one (its name form, ${PROJECT_ID} in the body):
		// listed, delivered to, removed.
		name := "us-central1-auditPing-0-projects/" + project + "/locations/us-central1/channels/extra"
		reg := `{"eventTrigger":{"eventType":"com.example.extra","channel":"projects/${PROJECT_ID}/locations/us-central1/channels/extra","service":"eventarc.googleapis.com"}}`
		if status, got := call(t, "POST", arc+"/emulator/v1/projects/"+project+"/triggers/"+name, "", "application/json", []byte(reg)); status != 200 || got["res"] != "OK" {
			t.Fatalf("register: %d %v", status, got)
		}
		_, list = call(t, "GET", arc+"/google/getTriggers", "", "", nil)
		wantReg := `[map[eventTrigger:map[channel:projects/` + project + `/locations/us-central1/channels/extra eventType:com.example.extra service:eventarc.googleapis.com] projectId:` + project + ` triggerName:` + name + `]]`
		if g := fmt.Sprint(list["com.example.extra-projects/"+project+"/locations/us-central1/channels/extra"]); g != wantReg {
			t.Errorf("the registration is listed as %s, want %s", g, wantReg)
		}
		extra := func(id string) string {
			return `{"events":[{"@type":"type.googleapis.com/io.cloudevents.v1.CloudEvent","id":"` + id + `","source":"s","specVersion":"1.0","type":"com.example.extra","textData":"x"}]}`
		}
		extraURL := arc + "/projects/" + project + "/locations/us-central1/channels/extra:publishEvents"
		if status, got := call(t, "POST", extraURL, "owner", "application/json", []byte(extra("extra-1"))); status != 200 {
			t.Fatalf("publish to the registered channel: %d %v", status, got)
		}
		if p := seen(t, b, "auditPing-extra-1")["event"].(map[string]any); p["type"] != "com.example.extra" || p["data"] != "x" {
			t.Errorf("auditPing received %v through its registration", p)
		}
		for _, c := range []struct {
			path, body, msg string
		}{
			{"/emulator/v1/projects/" + project + "/triggers/us-central1-auditPing", `{}`, "Missing event trigger for us-central1-auditPing."},
			{"/emulator/v1/projects/" + project + "/triggers/us-central1-nothing", reg, "names no loaded v2 event function"},
			{"/emulator/v1/projects/other/triggers/us-central1-auditPing", reg, "project other"},
			{"/emulator/v1/projects/" + project + "/triggers/us-central1-auditPing", `{"eventTrigger":`, "not JSON"},
			{"/emulator/v1/projects/" + project + "/triggers/us-central1-auditPing", `{"eventTrigger":{"eventType":"google.cloud.firestore.document.v1.created"}}`, "is a Pyric service's"},
		} {
			if status, got := call(t, "POST", arc+c.path, "", "application/json", []byte(c.body)); status != 400 || !strings.Contains(fmt.Sprint(got["error"]), c.msg) {
				t.Errorf("POST %s %s: %d %v, want 400 %q", c.path, c.body, status, got, c.msg)
			}
		}
		if status, got := call(t, "POST", arc+"/emulator/v1/remove/projects/"+project+"/triggers/"+name, "", "application/json", []byte(reg)); status != 200 || got["res"] != "OK" {
			t.Fatalf("remove: %d %v", status, got)
		}
		if status, got := call(t, "POST", arc+"/emulator/v1/remove/projects/"+project+"/triggers/"+name, "", "application/json", []byte(reg)); status != 400 || !strings.Contains(fmt.Sprint(got["error"]), "Unable to delete function trigger") {
			t.Errorf("second remove: %d %v", status, got)
		}
		if status, _ := call(t, "POST", extraURL, "owner", "application/json", []byte(extra("extra-2"))); status != 200 {
			t.Fatal("publish after the removal")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := b.Functions().TriggersIdle(ctx); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"fatalIssue-alert-2", "fatalIssue-alert-3", "auditPing-extra-2"} {
			url := fmt.Sprintf("http://%s/v1/projects/%s/databases/(default)/documents/seen/%s", b.Addr(backend.Firestore), project, id)
			if status, _ := call(t, "GET", url, "owner", "", nil); status != 404 {
				t.Errorf("%s was delivered", id)
			}
		}
	})

	// conformance: functions.delivery.chain
	t.Run("a function's Storage and Auth writes name its invocation", func(t *testing.T) {
		if status, out := call(t, "POST", fsURL+"/accounts?documentId=acct1", "owner", "application/json", []byte(`{"fields":{}}`)); status != 200 {
			t.Fatalf("create: %d %v", status, out)
		}
		seen(t, b, "provision-acct1")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := b.Functions().TriggersIdle(ctx); err != nil {
			t.Fatal(err)
		}
		history := b.Sandbox.Events().History()
		byID := map[string]event.Event{}
		runs := map[string]*event.Invocation{} // by function
		for _, e := range history {
			byID[e.ID] = e
			if e.Invocation != nil && e.Invocation.Outcome == "ok" {
				switch e.Invocation.Function {
				case "provision", "uploaded", "newUser":
					if e.Invocation.Function == "provision" || strings.Contains(fmt.Sprint(byID[e.Invocation.CauseEventID].Path), "acct1") {
						runs[e.Invocation.Function] = e.Invocation
					}
				}
			}
		}
		inv := runs["provision"]
		if inv == nil {
			t.Fatal("no provision invocation")
		}
		var writes []string
		for _, id := range inv.Writes {
			w := byID[id]
			if w.Actor.Invocation != inv.InvocationID {
				t.Errorf("write %s %s %s names invocation %q, want %s", id, w.Service, w.Path, w.Actor.Invocation, inv.InvocationID)
			}
			writes = append(writes, w.Service+" "+w.Method+" "+w.Path)
		}
		t.Logf("provision's writes: %q", writes)
		for _, want := range []string{"storage", "auth", "auth", "firestore"} {
			if len(writes) == 0 || !strings.HasPrefix(writes[0], want+" ") {
				t.Fatalf("provision's writes are %q, want Storage's upload, Auth's createUser and setCustomUserClaims, then the Firestore record", writes)
			}
			writes = writes[1:]
		}
		// And the chain goes on: the upload fires uploaded, the new user
		// newUser, each caused by the write provision made.
		for fn, svc := range map[string]string{"uploaded": "storage", "newUser": "auth"} {
			r := runs[fn]
			if r == nil {
				t.Errorf("no %s invocation caused by provision's %s write", fn, svc)
				continue
			}
			c := byID[r.CauseEventID]
			if c.Service != svc || c.Actor.Invocation != inv.InvocationID {
				t.Errorf("%s was caused by %s %s %s of invocation %q, want a %s write of %s", fn, c.ID, c.Service, c.Path, c.Actor.Invocation, svc, inv.InvocationID)
			}
		}
	})

	t.Run("invocations are events caused by the write", func(t *testing.T) {
		var commits = map[string]bool{}
		var caused int
		for _, e := range b.Sandbox.Events().History() {
			if e.Kind == event.KindCommit {
				commits[e.ID] = true
			}
		}
		for _, e := range b.Sandbox.Events().History() {
			if e.Invocation != nil && e.Invocation.Function == "totalOrder" {
				if !commits[e.Invocation.CauseEventID] {
					t.Errorf("totalOrder's invocation names cause %q, not a commit", e.Invocation.CauseEventID)
				}
				caused++
			}
		}
		if caused != 1 {
			t.Errorf("totalOrder ran %d times, want 1", caused)
		}
	})

	// conformance: functions.delivery.chain
	t.Run("an invocation lists the writes it made and they name it", func(t *testing.T) {
		history := b.Sandbox.Events().History()
		byID := map[string]event.Event{}
		var inv *event.Invocation
		for _, e := range history {
			byID[e.ID] = e
			if e.Invocation != nil && e.Invocation.Function == "totalOrder" {
				inv = e.Invocation
			}
		}
		if inv == nil {
			t.Fatal("no totalOrder invocation")
		}
		// Its writes: the RTDB total (over the Admin SDK's WebSocket)
		// and the Firestore record (over gRPC), each naming the run.
		var paths []string
		for _, id := range inv.Writes {
			w, ok := byID[id]
			if !ok {
				t.Fatalf("write %s of the invocation is not in the history", id)
			}
			if w.Actor.Invocation != inv.InvocationID || w.Kind != event.KindCommit {
				t.Errorf("write %s: %s %s by %+v, want a commit by %s", id, w.Kind, w.Path, w.Actor, inv.InvocationID)
			}
			paths = append(paths, w.Service+":"+w.Path)
		}
		wantPaths := []string{"database:/totals/o1", "firestore:seen/totalOrder-o1"}
		if fmt.Sprint(paths) != fmt.Sprint(wantPaths) {
			t.Errorf("totalOrder's writes are %v, want %v", paths, wantPaths)
		}
		// And only those: no other event names the run, and the
		// client's write that caused it names none.
		for _, e := range history {
			if e.Actor.Invocation == inv.InvocationID && (e.Kind == event.KindCommit || e.Kind == event.KindMutation) && !slices.Contains(inv.Writes, e.ID) {
				t.Errorf("%s %s names %s but is not in its writes", e.ID, e.Path, inv.InvocationID)
			}
		}
		if c := byID[inv.CauseEventID]; c.Actor.Invocation != "" {
			t.Errorf("the client's write %s names invocation %s", c.ID, c.Actor.Invocation)
		}
	})
}

// TestTasksSurviveRestart: a task enqueued through the Admin SDK is
// durable once acknowledged — a delayed one still runs after the
// backend stops and starts again on the same data dir.
func TestTasksSurviveRestart(t *testing.T) {
	t.Setenv("PATH", e2etest.NeedFunctions(t))
	cbs, err := functions.ParseConfig(json.RawMessage(`[{"source":"triggers","codebase":"triggers"}]`), e2etest.FunctionsDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	start := func() *backend.Backend {
		b, err := backend.Start(backend.Options{
			Sandbox:   sandbox.Options{Project: project, DataDir: dir},
			Firestore: backend.FirestoreOptions{Rules: openRules},
			Functions: backend.FunctionsOptions{Options: functions.Options{Codebases: cbs, Log: &testLog{t: t}, Poll: -1}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b := start()
	fnURL := fmt.Sprintf("http://%s/%s/us-central1/enqueueWork", b.Addr(backend.Functions), project)
	if status, got := call(t, "GET", fnURL+"?id=kept&n=3&delay=3", "", "", nil); status != 200 {
		t.Fatalf("enqueue: %d %v", status, got)
	}
	if n := len(b.Functions().Tasks()); n != 1 {
		t.Fatalf("%d tasks waiting, want 1", n)
	}
	b.Shutdown(context.Background())

	b = start()
	t.Cleanup(func() { b.Shutdown(context.Background()) })
	if n := len(b.Functions().Tasks()); n != 1 {
		t.Fatalf("after the restart %d tasks waiting, want 1", n)
	}
	want(t, "processTask kept", seen(t, b, "processTask-kept"), map[string]any{"id": "kept", "retryCount": 0, "n": 3})
}
