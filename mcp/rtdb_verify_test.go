package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/verify"
)

// rtdbEnv is an env whose sandbox runs the Realtime Database (no rules:
// only admin reads), seeded through the engine's admin path.
func rtdbEnv(t *testing.T) (*env, *database.Database) {
	t.Helper()
	e := newEnvOn(t, sandbox.Options{Deterministic: true, Seed: 1, Services: []service.Registration{database.Registration(database.Options{})}}, Options{})
	db, ok := sandbox.Lookup[*database.Database](e.sb)
	if !ok {
		t.Fatal("no database service")
	}
	ns := database.DefaultNamespace(db.Project())
	admin := identity.AdminIdentity()
	set := func(path string, v any) {
		t.Helper()
		if _, err := db.Set(admin, ns, path, v, database.WriteOptions{}); err != nil {
			t.Fatalf("set %s: %v", path, err)
		}
	}
	set("users/alice", map[string]any{"name": "Alice", "age": 30})
	set("users/bob", map[string]any{"name": "Bob", "age": 41, "admin": true})
	set("scores", []any{10, 20, 30})
	set("config", map[string]any{"theme": "dark", "maxPlayers": 4})
	for _, title := range []string{"hello", "again"} {
		if _, err := db.Push(admin, ns, "users/alice/posts", map[string]any{"title": title, "likes": 1}); err != nil {
			t.Fatal(err)
		}
	}
	return e, db
}

func templatesOf(t *testing.T, r reply) map[string]map[string]any {
	t.Helper()
	raw, _ := json.Marshal(r.Data["templates"])
	var out map[string]map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("templates: %s", raw)
	}
	return out
}

func TestRTDBCrawlStructure(t *testing.T) {
	t.Parallel()
	e, db := rtdbEnv(t)
	r := e.call("rtdb_crawl_structure", map[string]any{})
	if !r.OK || r.Data["namespace"] != database.DefaultNamespace(db.Project()) || r.Data["truncated"] != false {
		t.Fatalf("crawl: %s", js(r))
	}
	got := templatesOf(t, r)
	want := map[string]struct {
		types string
		count float64
	}{
		"/":                                    {"object", 1},
		"/users":                               {"object", 1},
		"/users/{userId}":                      {"object", 2},
		"/users/{userId}/name":                 {"string", 2},
		"/users/{userId}/age":                  {"number", 2},
		"/users/{userId}/admin":                {"boolean", 1},
		"/users/{userId}/posts":                {"object", 1},
		"/users/{userId}/posts/{postId}":       {"object", 2},
		"/users/{userId}/posts/{postId}/title": {"string", 2},
		"/users/{userId}/posts/{postId}/likes": {"number", 2},
		"/scores":                              {"object", 1},
		"/scores/{scoreId}":                    {"number", 3},
		"/config":                              {"object", 1},
		"/config/theme":                        {"string", 1},
		"/config/maxPlayers":                   {"number", 1},
	}
	var names []string
	for k := range got {
		names = append(names, k)
	}
	sort.Strings(names)
	if len(got) != len(want) {
		t.Fatalf("templates %v, want %d of them", names, len(want))
	}
	for path, w := range want {
		g, ok := got[path]
		if !ok {
			t.Fatalf("no template %s in %v", path, names)
		}
		if fmt.Sprint(g["types"]) != "["+w.types+"]" || g["count"] != w.count {
			t.Errorf("%s: %v, want types %s count %v", path, g, w.types, w.count)
		}
	}
	if fmt.Sprint(got["/"]["children"]) != "[config scores users]" || fmt.Sprint(got["/users"]["children"]) != "[{userId}]" {
		t.Errorf("children: %v %v", got["/"], got["/users"])
	}
	// No leaf value leaks into the result.
	if b := js(r); strings.Contains(b, "Alice") || strings.Contains(b, "dark") {
		t.Errorf("leaf values in result: %s", b)
	}

	// A subtree, and the limits.
	r = e.call("rtdb_crawl_structure", map[string]any{"path": "/users/alice"})
	if got := templatesOf(t, r); !r.OK || got["/users/alice/posts/{postId}"]["count"] != 2.0 {
		t.Fatalf("subtree: %s", js(r))
	}
	r = e.call("rtdb_crawl_structure", map[string]any{"maxDepth": 1})
	if got := templatesOf(t, r); !r.OK || r.Data["truncated"] != true || len(got) != 4 || got["/users"]["truncated"] != true {
		t.Fatalf("maxDepth 1: %s", js(r))
	}
	r = e.call("rtdb_crawl_structure", map[string]any{"maxNodes": 3})
	if !r.OK || r.Data["truncated"] != true || r.Data["nodesVisited"] != 3.0 {
		t.Fatalf("maxNodes 3: %s", js(r))
	}
	r = e.call("rtdb_crawl_structure", map[string]any{"path": "scores", "maxChildren": 2})
	if !r.OK || r.Data["skippedChildren"] != 1.0 || templatesOf(t, r)["/scores/{scoreId}"]["count"] != 2.0 {
		t.Fatalf("maxChildren 2: %s", js(r))
	}
	r = e.call("rtdb_crawl_structure", map[string]any{"namespace": "other-ns"})
	if !r.OK || r.Data["empty"] != true {
		t.Fatalf("empty namespace: %s", js(r))
	}

	// Bad input and denials: coded errors.
	for _, tc := range []struct {
		args        map[string]any
		code        string
		recoverable bool
	}{
		{map[string]any{"maxDepth": 100}, "INVALID_ARGUMENT", true},
		{map[string]any{"maxNodes": MaxCrawlNodes + 1}, "INVALID_ARGUMENT", true},
		{map[string]any{"path": "a#b"}, "INVALID_ARGUMENT", true},
		{map[string]any{"maxDepth": "deep"}, "INVALID_ARGUMENT", true},
		{map[string]any{"as": map[string]any{"uid": "alice"}}, "PERMISSION_DENIED", true},
	} {
		r := e.call("rtdb_crawl_structure", tc.args)
		if r.OK || r.errCode() != tc.code || r.recoverable() != tc.recoverable {
			t.Errorf("%v: %s", tc.args, js(r))
		}
	}

	// Calls are events of the agent; the denied one names the user.
	var sawDenied bool
	for _, ev := range e.sb.Events().History() {
		if ev.Service == eventService && ev.Method == "rtdb_crawl_structure" && ev.Identity.UID == "alice" && ev.Err != nil && ev.Err.Code == "PERMISSION_DENIED" {
			sawDenied = true
		}
	}
	if !sawDenied {
		t.Error("no tool-call event for the denied crawl")
	}
}

func TestRTDBCrawlWithoutService(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	r := e.call("rtdb_crawl_structure", map[string]any{})
	if r.OK || r.errCode() != "SERVICE_UNAVAILABLE" || r.recoverable() {
		t.Fatalf("%s", js(r))
	}
}

func TestCrawlFolding(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		m    map[string]any
		want bool
	}{
		{map[string]any{"-NabcdefghijklmnopqR": 1, "-NabcdefghijklmnopqS": map[string]any{"a": 1}}, true},
		{map[string]any{"0": "x", "1": "y"}, true},
		{map[string]any{"theme": map[string]any{"color": 1}}, false},                                                     // one child: a named field
		{map[string]any{"a": map[string]any{"x": 1, "y": 1}, "b": map[string]any{"z": 1, "w": 1}}, false},                // nothing shared
		{map[string]any{"a": map[string]any{"x": 1, "y": 1}, "b": map[string]any{"x": 1, "z": 1}}, false},                // 1 of 3 shared
		{map[string]any{"a": map[string]any{"x": 1, "y": 1}, "b": map[string]any{"x": 1, "y": 2, ".priority": 1}}, true}, // records
		{map[string]any{"a": map[string]any{"x": 1}, "b": "leaf"}, false},
	} {
		ks := make([]string, 0, len(tc.m))
		for k := range tc.m {
			ks = append(ks, k)
		}
		if got := foldable(tc.m, ks); got != tc.want {
			t.Errorf("foldable(%v) = %v, want %v", tc.m, got, tc.want)
		}
	}
	if uniqueVar("{id}/x", "id") != "{id2}" || variableFor("") != "id" || variableFor("ttt_lobbies") != "lobbyId" {
		t.Error("variable naming")
	}
}

const ownerRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{db}/documents {
    match /c/{id} {
      allow read: if true;
      allow create, update: if request.auth.uid == request.resource.data.owner;
    }
  }
}`

const closedRules = `rules_version = '2';
service cloud.firestore { match /databases/{db}/documents { match /{d=**} { allow read, write: if false; } } }`

// session is a captured session of n allowed client creates by alice and
// bob under ownerRules (a request and a commit event each).
func session(n int) *capture.Fixture {
	f := &capture.Fixture{Schema: capture.Schema, Services: map[string]*capture.ServiceData{}}
	docs := map[string]map[string]any{}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	seq := uint64(0)
	for i := 0; i < n; i++ {
		uid := []string{"alice", "bob"}[i%2]
		path := fmt.Sprintf("c/d%d", i)
		data := map[string]any{"owner": uid, "i": int64(i)}
		at := t0.Add(time.Duration(i) * time.Millisecond)
		seq++
		f.Events = append(f.Events, event.Event{Seq: seq, ID: fmt.Sprintf("evt-%d", seq), At: at, Kind: event.KindRequest, Service: "firestore",
			Identity: event.Identity{Lens: event.LensUser, UID: uid}, Method: "create", Path: path, Origin: event.OriginClient,
			Request: &event.Request{Verdict: event.Allow, Seen: &event.Seen{Data: data, Before: &event.Resource{}}}})
		seq++
		f.Events = append(f.Events, event.Event{Seq: seq, ID: fmt.Sprintf("evt-%d", seq), At: at, Kind: event.KindCommit, Service: "firestore",
			Identity: event.Identity{Lens: event.LensUser, UID: uid}, Method: "create", Path: path,
			Commit: &event.Commit{RequestTime: at, After: data}})
		docs[path] = data
	}
	state, _ := json.Marshal(map[string]any{"documents": docs})
	f.Services["firestore"] = &capture.ServiceData{Rules: &capture.Rules{Format: capture.FormatFirestore, Source: ownerRules}, State: state}
	return f
}

func writeFixture(t *testing.T, f *capture.Fixture) string {
	t.Helper()
	b, err := capture.Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "session.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVerifyFixture(t *testing.T) {
	t.Parallel()
	f := session(4)
	e := newEnv(t, Options{Capture: func() (*capture.Fixture, error) { return f, nil }})
	path := writeFixture(t, f)
	dir := filepath.Dir(path)
	closedPath := filepath.Join(dir, "closed.rules")
	if err := os.WriteFile(closedPath, []byte(closedRules), 0o600); err != nil {
		t.Fatal(err)
	}

	// The captured rules: nothing changes. data is verify's JSON exactly.
	r := e.call("pyric_verify_fixture", map[string]any{"fixture": path})
	want, _ := verify.Run(f, verify.Options{Registrations: backend.Services(&backend.Options{})})
	wantJSON, _ := json.Marshal(want)
	var wantData map[string]any
	json.Unmarshal(wantJSON, &wantData)
	if !r.OK || !reflect.DeepEqual(r.Data, wantData) || !strings.Contains(r.Summary, "4 request(s) re-decided") {
		t.Fatalf("captured rules: %s\nwant data %s", js(r), wantJSON)
	}

	// Closed candidate rules (as text, as a path, and on the server's
	// capture): every create is now denied. A finding, not an error.
	for _, args := range []map[string]any{
		{"fixture": path, "rules": closedRules},
		{"fixture": path, "rulesPath": closedPath},
		{"rules": closedRules},
	} {
		r := e.call("pyric_verify_fixture", args)
		fsr, _ := r.Data["services"].(map[string]any)["firestore"].(map[string]any)
		divs, _ := fsr["divergences"].([]any)
		nowDenied := 0
		for _, d := range divs {
			if d.(map[string]any)["kind"] == verify.NowDenied {
				nowDenied++
			}
		}
		if r.OK || r.isError || r.Data["ok"] != false || nowDenied != 4 || !strings.HasPrefix(r.Summary, "FAILED") {
			t.Fatalf("%v: %s", args, js(r))
		}
	}

	// Case derivation.
	r = e.call("pyric_verify_fixture", map[string]any{"fixture": path, "caseDerivation": true})
	if tc, _ := r.Data["testCases"].([]any); !r.OK || len(tc) != 4 || r.Data["source"] != ownerRules {
		t.Fatalf("derive: %s", js(r))
	}

	// Only the services asked for are reported.
	r = e.call("pyric_verify_fixture", map[string]any{"fixture": path, "services": []string{"database"}})
	if svcs, _ := r.Data["services"].(map[string]any); !r.OK || len(svcs) != 1 || svcs["database"] == nil {
		t.Fatalf("services [database]: %s", js(r))
	}

	// Bad input: coded errors.
	garbage := filepath.Join(dir, "garbage.json")
	os.WriteFile(garbage, []byte(`{"schema": "nope"}`), 0o600)
	for _, tc := range []struct {
		args        map[string]any
		code        string
		recoverable bool
	}{
		{map[string]any{"fixture": filepath.Join(dir, "missing.json")}, "FIXTURE_NOT_FOUND", true},
		{map[string]any{"fixture": garbage}, "FIXTURE_INVALID", true},
		{map[string]any{"fixture": path, "rules": "service cloud.firestore { match /a { allow read: if ; } }"}, "RULES_INVALID", true},
		{map[string]any{"fixture": path, "rulesPath": filepath.Join(dir, "missing.rules")}, "RULES_NOT_FOUND", true},
		{map[string]any{"fixture": path, "rules": closedRules, "rulesPath": closedPath}, "INVALID_ARGUMENT", true},
		{map[string]any{"fixture": path, "services": []string{"messaging"}}, "UNSUPPORTED_SERVICE", true},
		{map[string]any{"fixture": path, "databaseRules": `{"rules": {".read": "auth.uid ==="}}`}, "RULES_INVALID", true},
		{map[string]any{"fixture": path, "storageRules": "x", "storageRulesPath": closedPath}, "INVALID_ARGUMENT", true},
		{map[string]any{"fixture": 7}, "INVALID_ARGUMENT", true},
		{map[string]any{"fixture": dir}, "INVALID_ARGUMENT", true},
		{map[string]any{"fixture": path, "rulesPath": dir}, "INVALID_ARGUMENT", true},
	} {
		r := e.call("pyric_verify_fixture", tc.args)
		if r.OK || r.errCode() != tc.code || r.recoverable() != tc.recoverable {
			t.Errorf("%v: %s", tc.args, js(r))
		}
	}
	if r := e.call("pyric_verify_fixture", map[string]any{"fixture": path, "rules": "service cloud.firestore { match /a { allow read: if ; } }"}); r.Data["diagnostics"] == nil {
		t.Errorf("rules error without diagnostics: %s", js(r))
	}
}

func TestVerifyWithoutCapture(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	r := e.call("pyric_verify_fixture", map[string]any{})
	if r.OK || r.errCode() != "NO_CAPTURE" || !r.recoverable() {
		t.Fatalf("%s", js(r))
	}
	// A server given no services to replay with says so, whatever the
	// fixture.
	e = newEnv(t, Options{Registrations: []service.Registration{}})
	r = e.call("pyric_verify_fixture", map[string]any{"fixture": writeFixture(t, session(1))})
	if r.OK || r.errCode() != "VERIFY_UNAVAILABLE" || r.recoverable() || !strings.Contains(r.Summary, "mcp.Options.Registrations") {
		t.Fatalf("no registrations: %s", js(r))
	}
}

// TestVerifyLiveCapture verifies the running server's capture: a backend
// as pyric serve starts it, writes made through this MCP server as users
// (so the engine judges them by the loaded rules), and Options.Capture
// wired the way serve wires it (capture.FromSandbox of the history).
func TestVerifyLiveCapture(t *testing.T) {
	t.Parallel()
	b, err := backend.Start(backend.Options{Sandbox: sandbox.Options{Deterministic: true, Seed: 1}, Firestore: backend.FirestoreOptions{Rules: ownerRules}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Shutdown(context.Background()) })
	e := newEnvUsing(t, b.Sandbox, Options{Capture: func() (*capture.Fixture, error) { return capture.FromSandbox(b.Sandbox, b.Sandbox.Events().History()) }})
	for _, uid := range []string{"alice", "bob"} {
		r := e.call("firestore_create_document", map[string]any{"path": "c/" + uid, "data": map[string]any{"owner": uid}, "as": map[string]any{"uid": uid}})
		if !r.OK {
			t.Fatalf("create as %s: %s", uid, js(r))
		}
	}
	r := e.call("pyric_verify_fixture", map[string]any{})
	fsr, _ := r.Data["services"].(map[string]any)["firestore"].(map[string]any)
	if !r.OK || fsr["checkedEvents"] != 2.0 {
		t.Fatalf("captured rules: %s", js(r))
	}
	r = e.call("pyric_verify_fixture", map[string]any{"rules": closedRules})
	fsr, _ = r.Data["services"].(map[string]any)["firestore"].(map[string]any)
	if divs, _ := fsr["divergences"].([]any); r.OK || len(divs) < 2 || divs[0].(map[string]any)["kind"] != verify.NowDenied {
		t.Fatalf("closed rules: %s", js(r))
	}
}
