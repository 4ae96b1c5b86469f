package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/functions"
	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/sandbox"
)

// TestFunctionsTools lists and invokes e2e/functions/js through the MCP
// client: an HTTPS function with a path and body, a callable with data
// and its HttpsError, an event function with a payload and then with its
// recorded one, and the errors of bad calls.
func TestFunctionsTools(t *testing.T) {
	t.Setenv("PATH", e2etest.NeedFunctions(t))
	cbs, err := functions.ParseConfig(json.RawMessage(`{"source":"js","codebase":"js"}`), e2etest.FunctionsDir())
	if err != nil {
		t.Fatal(err)
	}
	ports := map[string]int{}
	for _, s := range backend.Catalog() {
		if s.Service != backend.Functions && s.Service != backend.Firestore && s.Service != backend.Auth {
			ports[s.Service] = backend.Disabled
		}
	}
	b, err := backend.Start(backend.Options{Sandbox: sandbox.Options{Project: "demo-fn-mcp"}, Ports: ports,
		Functions: backend.FunctionsOptions{Options: functions.Options{Codebases: cbs, Poll: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Shutdown(context.Background()) })
	base := "http://" + b.Addr(backend.Functions)
	e := newEnvUsing(t, b.Sandbox, Options{FunctionsURL: func() string { return base }})

	r := e.call("functions_list", map[string]any{})
	if !r.OK {
		t.Fatalf("list: %+v", r)
	}
	byID := map[string]map[string]any{}
	for _, f := range r.Data["functions"].([]any) {
		m := f.(map[string]any)
		byID[m["id"].(string)] = m
	}
	if h := byID["hello"]; h == nil || h["kind"] != "https" || h["url"] != base+"/demo-fn-mcp/us-central1/hello" {
		t.Errorf("hello: %v", h)
	}
	if n := byID["onNote"]; n == nil || n["kind"] != "event" || n["eventType"] != "google.cloud.firestore.document.v1.created" || !strings.Contains(n["resource"].(string), "document=notes/{id}") {
		t.Errorf("onNote: %v", n)
	}
	if a := byID["add"]; a == nil || a["kind"] != "callable" || a["platform"] != "gcfv1" {
		t.Errorf("add: %v", a)
	}

	r = e.call("functions_invoke", map[string]any{"function": "hello", "method": "PATCH", "path": "/a/b", "body": map[string]any{"k": "v"}})
	body, _ := r.Data["body"].(map[string]any)
	if !r.OK || r.Data["status"] != float64(200) || body["method"] != "PATCH" || body["path"] != "/a/b" || body["body"].(map[string]any)["k"] != "v" {
		t.Errorf("invoke hello: %+v", r)
	}
	// A string body is sent as text.
	r = e.call("functions_invoke", map[string]any{"function": "hello", "body": "plain words"})
	body, _ = r.Data["body"].(map[string]any)
	if !r.OK || body["contentType"] != "text/plain" || body["rawBody"] != "cGxhaW4gd29yZHM=" {
		t.Errorf("text body: %+v", r)
	}
	r = e.call("functions_invoke", map[string]any{"function": "add", "data": map[string]any{"a": 40, "b": 2}})
	if !r.OK || r.Data["status"] != float64(200) || js(r.Data["body"]) != `{"result":{"sum":42,"uid":null}}` || !strings.Contains(r.Summary, "answered 200") {
		t.Errorf("invoke add: %+v", r)
	}
	r = e.call("functions_invoke", map[string]any{"function": "add", "data": map[string]any{"a": 1}})
	if !r.OK || r.Data["status"] != float64(400) || !strings.Contains(js(r.Data["body"]), "a and b must be numbers") {
		t.Errorf("invoke add badly: %+v", r)
	}

	for _, c := range []struct {
		args map[string]any
		code string
	}{
		{map[string]any{"function": "nope"}, "NOT_FOUND"},
		{map[string]any{}, "INVALID_ARGUMENT"},
		{map[string]any{"function": "hello", "method": "TRACE"}, "INVALID_ARGUMENT"},
		{map[string]any{"function": "onNote"}, "FAILED_PRECONDITION"},
	} {
		if r := e.call("functions_invoke", c.args); r.OK || r.errCode() != c.code {
			t.Errorf("%v: %+v, want %s", c.args, r, c.code)
		}
	}

	// An event function with a given payload (a v2 Firestore event of a
	// deleted document: no data), then again with the recorded one.
	payload := map[string]any{"specversion": "1.0", "id": "ev-1", "source": "//firestore.googleapis.com/projects/demo-fn-mcp/databases/(default)",
		"type": "google.cloud.firestore.document.v1.created", "time": time.Now().UTC().Format(time.RFC3339Nano),
		"document": "notes/given", "datacontenttype": "application/json", "data": map[string]any{}}
	sub := b.Sandbox.Events().Subscribe(16)
	defer sub.Close()
	for i, args := range []map[string]any{{"function": "onNote", "payload": payload}, {"function": "onNote"}} {
		r = e.call("functions_invoke", args)
		if !r.OK || r.Data["outcome"] != "ok" {
			t.Fatalf("deliver %d: %+v", i, r)
		}
		var inv *event.Invocation
		for inv == nil {
			select {
			case ev := <-sub.Events():
				if ev.Kind == event.KindInvocation {
					inv = ev.Invocation
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no invocation event")
			}
		}
		if inv.Function != "onNote" || inv.Outcome != "ok" || inv.TriggerType != "google.cloud.firestore.document.v1.created" || !strings.Contains(js(inv.Logs), `"note given"`) {
			t.Errorf("delivery %d's event: %+v", i, inv)
		}
	}
}
