package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/internal/testfs"
	"github.com/pyric/pyric/sandbox"
)

const testRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /accounts/{uid} {
      allow read: if request.auth != null && request.auth.uid == uid;
      allow create, update: if request.auth != null && request.auth.uid == uid
        && request.resource.data.balance >= 0;
      allow delete: if false;
    }
    match /public/{id} {
      allow read, write: if request.auth != null;
    }
  }
}
`

const rtdbRules = `{"rules": {"users": {"$uid": {".read": "auth != null && auth.uid == $uid", ".write": "auth != null && auth.uid == $uid", ".validate": "newData.hasChildren(['name'])"}}}}`

// allTools is every tool the server must offer.
var allTools = []string{
	"explain_denial", "firestore_add_document", "firestore_batch_write", "firestore_create_document", "firestore_create_with_auto_id",
	"firestore_delete_document", "firestore_discover_paths", "firestore_find_collection_group", "firestore_get_document",
	"firestore_lint_rules", "firestore_list_documents", "firestore_query_where", "firestore_rules_stdlib_get", "firestore_rules_stdlib_list",
	"firestore_simulate_rules", "firestore_simulator_batch", "firestore_simulator_create", "firestore_simulator_events",
	"firestore_simulator_execute", "firestore_simulator_read", "firestore_simulator_redo", "firestore_simulator_transaction",
	"firestore_simulator_undo", "firestore_update_document", "functions_invoke", "functions_list", "functions_run_scheduled", "pubsub_list", "pubsub_publish", "pubsub_pull", "pyric_verify_fixture", "rtdb_crawl_structure", "rtdb_simulate_access", "rules_stdlib_get", "rules_stdlib_list", "sandbox_inspect",
}

type env struct {
	t    *testing.T
	sb   *sandbox.Sandbox
	sess *sdk.ClientSession
}

func newEnv(t *testing.T, opts Options) *env {
	t.Helper()
	return newEnvOn(t, sandbox.Options{Deterministic: true, Seed: 1}, opts)
}

// newEnvOn is newEnv on a sandbox opened with sbOpts.
func newEnvOn(t *testing.T, sbOpts sandbox.Options, opts Options) *env {
	t.Helper()
	sb, err := sandbox.Open(testfs.With(sbOpts))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return newEnvUsing(t, sb, opts)
}

// newEnvUsing is an env on an open sandbox.
func newEnvUsing(t *testing.T, sb *sandbox.Sandbox, opts Options) *env {
	t.Helper()
	if opts.Registrations == nil {
		// The services pyric_verify_fixture replays with, as the CLI
		// passes them.
		opts.Registrations = backend.Services(&backend.Options{})
	}
	srv := NewServer(sb, opts)
	ct, st := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &env{t: t, sb: sb, sess: cs}
}

// reply is a decoded envelope.
type reply struct {
	OK      bool           `json:"ok"`
	Summary string         `json:"summary"`
	Data    map[string]any `json:"data"`
	isError bool
}

func (r reply) errCode() string {
	e, _ := r.Data["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func (r reply) recoverable() bool {
	e, _ := r.Data["error"].(map[string]any)
	b, _ := e["recoverable"].(bool)
	return b
}

func callOn(t *testing.T, sess *sdk.ClientSession, name string, args any) reply {
	t.Helper()
	res, err := sess.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content blocks", name, len(res.Content))
	}
	text := res.Content[0].(*sdk.TextContent).Text
	var r reply
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		t.Fatalf("%s: not an envelope: %s", name, text)
	}
	structured, _ := json.Marshal(res.StructuredContent)
	var r2 reply
	if err := json.Unmarshal(structured, &r2); err != nil || r2.Summary != r.Summary || r2.OK != r.OK {
		t.Fatalf("%s: structured content %s differs from text %s", name, structured, text)
	}
	if r.Summary == "" {
		t.Fatalf("%s: empty summary", name)
	}
	r.isError = res.IsError
	if res.IsError != (r.errCode() != "") {
		t.Fatalf("%s: isError %v but error %q", name, res.IsError, r.errCode())
	}
	return r
}

func (e *env) call(name string, args any) reply { e.t.Helper(); return callOn(e.t, e.sess, name, args) }

func js(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestListTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	res, err := e.sess.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" {
			t.Errorf("%s: no description", tool.Name)
		}
		schema := tool.InputSchema.(map[string]any)
		if schema["type"] != "object" {
			t.Errorf("%s: schema type %v", tool.Name, schema["type"])
		}
		props, _ := schema["properties"].(map[string]any)
		for p, v := range props {
			if d, _ := v.(map[string]any)["description"].(string); d == "" {
				t.Errorf("%s.%s: no description", tool.Name, p)
			}
		}
	}
	sort.Strings(names)
	if strings.Join(names, ",") != strings.Join(allTools, ",") {
		t.Fatalf("tools:\n%v\nwant\n%v", names, allTools)
	}
}

func (e *env) create() {
	e.t.Helper()
	r := e.call("firestore_simulator_create", map[string]any{"rules": testRules, "documents": map[string]any{
		"accounts/alice": map[string]any{"balance": 100, "owner": "alice"},
		"accounts/bob":   map[string]any{"balance": 5},
	}})
	if !r.OK || r.Data["documentCount"].(float64) != 2 {
		e.t.Fatalf("create: %s", js(r))
	}
}

var alice = map[string]any{"uid": "alice"}

func TestSimulator(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create()

	// Allowed write.
	r := e.call("firestore_simulator_execute", map[string]any{"method": "update", "path": "accounts/alice", "auth": alice, "data": map[string]any{"balance": 90}})
	if !r.OK || r.Data["allowed"] != true {
		t.Fatalf("allowed update: %s", js(r))
	}
	// Denied write carries its explanation.
	r = e.call("firestore_simulator_execute", map[string]any{"method": "update", "path": "accounts/bob", "auth": alice, "data": map[string]any{"balance": 1}})
	if r.OK || r.Data["allowed"] != false || r.isError {
		t.Fatalf("denied update: %s", js(r))
	}
	msgs := fmt.Sprint(r.Data["debugMessages"])
	for _, want := range []string{"Deciding rule: line 6", "request.auth.uid == uid", "failed:", "Simulated: DENY"} {
		if !strings.Contains(msgs, want) {
			t.Errorf("debugMessages lack %q: %s", want, msgs)
		}
	}
	// Unauthenticated.
	r = e.call("firestore_simulator_execute", map[string]any{"method": "create", "path": "accounts/carol", "auth": nil, "data": map[string]any{"balance": 1}})
	if r.Data["allowed"] != false {
		t.Fatalf("signed-out create: %s", js(r))
	}
	// explain_denial: the last denial.
	r = e.call("explain_denial", map[string]any{})
	dr, _ := r.Data["decidingRule"].(map[string]any)
	if !r.OK || dr == nil || dr["line"].(float64) != 6 || !strings.Contains(r.Data["suggestedFix"].(string), "signed out") {
		t.Fatalf("explain last: %s", js(r))
	}
	// explain_denial by event id.
	ev := e.call("firestore_simulator_events", map[string]any{"verdict": "deny", "limit": 5})
	evs := ev.Data["events"].([]any)
	if len(evs) != 2 {
		t.Fatalf("denied events: %s", js(ev))
	}
	first := evs[0].(map[string]any)
	r = e.call("explain_denial", map[string]any{"eventId": first["id"]})
	if !r.OK || r.Data["path"] != "accounts/bob" || len(r.Data["failingExpressions"].([]any)) == 0 || !strings.Contains(r.Data["suggestedFix"].(string), "request.auth.uid") {
		t.Fatalf("explain by id: %s", js(r))
	}
	if r := e.call("explain_denial", map[string]any{"eventId": "nope"}); r.errCode() != "EVENT_NOT_FOUND" || !r.recoverable() {
		t.Fatalf("unknown event: %s", js(r))
	}

	// Transaction with $expr writes the computed value.
	r = e.call("firestore_simulator_transaction", map[string]any{
		"reads":  map[string]any{"acct": "accounts/alice"},
		"writes": []any{map[string]any{"method": "update", "path": "accounts/alice", "data": map[string]any{"balance": map[string]any{"$expr": "$acct.balance - 30"}, "by": map[string]any{"$expr": "auth.uid"}}}},
		"auth":   alice, "includeReads": true,
	})
	if !r.OK || r.Data["allowed"] != true || r.Data["reads"] == nil {
		t.Fatalf("transaction: %s", js(r))
	}
	got := e.call("firestore_get_document", map[string]any{"path": "accounts/alice"})
	if d := got.Data["data"].(map[string]any); d["balance"].(float64) != 60 || d["by"] != "alice" || d["owner"] != "alice" {
		t.Fatalf("after transaction: %s", js(got))
	}
	// A transaction that would go negative is denied by the rules: nothing written.
	r = e.call("firestore_simulator_transaction", map[string]any{
		"reads":  map[string]any{"acct": "accounts/alice"},
		"writes": []any{map[string]any{"method": "update", "path": "accounts/alice", "data": map[string]any{"balance": map[string]any{"$expr": "$acct.balance - 1000"}}}},
		"auth":   alice,
	})
	if r.OK || r.Data["allowed"] != false {
		t.Fatalf("overdraft: %s", js(r))
	}
	// A bad expression is a positioned, recoverable error.
	r = e.call("firestore_simulator_transaction", map[string]any{
		"reads":  map[string]any{"acct": "accounts/alice"},
		"writes": []any{map[string]any{"method": "update", "path": "accounts/alice", "data": map[string]any{"balance": map[string]any{"$expr": "$acct.balanse - 1"}}}},
		"auth":   alice,
	})
	if r.errCode() != "EXPR_ERROR" || !r.recoverable() || !strings.Contains(r.Summary, "balance: $expr 1:6: $acct has no field balanse") {
		t.Fatalf("bad expr: %s", js(r))
	}
	if r := e.call("firestore_simulator_transaction", map[string]any{"writes": []any{map[string]any{"method": "delete", "path": "public/x"}}, "auth": alice, "readOnly": true}); r.OK || r.Data["readOnlyViolation"] != true {
		t.Fatalf("readOnly: %s", js(r))
	}
	// Reads denied by rules.
	if r := e.call("firestore_simulator_transaction", map[string]any{"reads": map[string]any{"b": "accounts/bob"}, "auth": alice}); r.OK || r.Data["allowed"] != false {
		t.Fatalf("denied read: %s", js(r))
	}

	// Undo the transaction, then redo it.
	if r := e.call("firestore_simulator_undo", nil); !r.OK {
		t.Fatalf("undo: %s", js(r))
	}
	if d := e.call("firestore_get_document", map[string]any{"path": "accounts/alice"}).Data["data"].(map[string]any); d["balance"].(float64) != 90 || d["by"] != nil {
		t.Fatalf("after undo: %v", d)
	}
	if r := e.call("firestore_simulator_redo", nil); !r.OK {
		t.Fatalf("redo: %s", js(r))
	}
	if d := e.call("firestore_get_document", map[string]any{"path": "accounts/alice"}).Data["data"].(map[string]any); d["balance"].(float64) != 60 {
		t.Fatalf("after redo: %v", d)
	}
	if r := e.call("firestore_simulator_redo", nil); r.errCode() != "NOTHING_TO_REDO" {
		t.Fatalf("redo twice: %s", js(r))
	}

	// Batch: atomic, any denial means none apply.
	r = e.call("firestore_simulator_batch", map[string]any{"auth": alice, "operations": []any{
		map[string]any{"method": "create", "path": "public/p1", "data": map[string]any{"a": 1}},
		map[string]any{"method": "update", "path": "accounts/bob", "data": map[string]any{"balance": 0}},
	}})
	if r.OK || r.Data["allowed"] != false {
		t.Fatalf("batch: %s", js(r))
	}
	if d := e.call("firestore_get_document", map[string]any{"path": "public/p1"}); d.Data["exists"] != false {
		t.Fatalf("batch applied partly: %s", js(d))
	}
	r = e.call("firestore_create_with_auto_id", map[string]any{"collection": "public", "auth": alice, "data": map[string]any{"x": true}})
	if !r.OK {
		t.Fatalf("auto id: %s", js(r))
	}
	path := r.Data["writes"].([]any)[0].(map[string]any)["path"].(string)
	if !strings.HasPrefix(path, "public/") || len(path) != len("public/")+20 {
		t.Fatalf("minted path %q", path)
	}

	// Reads: admin by default, rules when asked.
	if r := e.call("firestore_simulator_read", map[string]any{"path": "accounts/bob"}); !r.OK || r.Data["exists"] != true {
		t.Fatalf("admin read: %s", js(r))
	}
	if r := e.call("firestore_simulator_read", map[string]any{"path": "accounts/bob", "auth": alice, "evaluateRules": true}); r.OK || r.Data["allowed"] != false {
		t.Fatalf("rules read: %s", js(r))
	}
	if r := e.call("firestore_simulator_read", map[string]any{"path": "public", "method": "list", "auth": alice, "evaluateRules": true}); !r.OK || r.Data["count"].(float64) != 1 {
		t.Fatalf("list: %s", js(r))
	}

	// Tool calls are events with origin agent.
	var agent int
	for _, ev := range e.sb.Events().History() {
		if ev.Actor.Kind == event.ActorAgent && ev.Actor.Name == "test" {
			agent++
		}
	}
	if agent < 20 {
		t.Fatalf("%d agent events", agent)
	}

	// Rules that don't compile load nothing.
	if r := e.call("firestore_simulator_create", map[string]any{"rules": "service cloud.firestore { match"}); r.errCode() != "RULES_INVALID" || len(r.Data["lint"].([]any)) == 0 {
		t.Fatalf("bad rules: %s", js(r))
	}
}

func TestDataTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create()
	steps := []struct {
		tool string
		args map[string]any
		ok   bool
		code string
	}{
		{"firestore_create_document", map[string]any{"path": "people/a", "data": map[string]any{"age": 30, "city": "Oslo"}}, true, ""},
		{"firestore_add_document", map[string]any{"collection": "people", "data": map[string]any{"age": 20, "city": "Rome"}}, true, ""},
		{"firestore_update_document", map[string]any{"path": "people/a", "data": map[string]any{"age": 31}}, true, ""},
		{"firestore_update_document", map[string]any{"path": "people/zz", "data": map[string]any{"age": 1}}, false, "NOT_FOUND"},
		{"firestore_get_document", map[string]any{"path": "accounts/bob", "as": alice}, false, "PERMISSION_DENIED"},
		{"firestore_get_document", map[string]any{"path": "accounts/alice", "as": map[string]any{"uid": "alice", "claims": map[string]any{"admin": true}}}, true, ""},
		{"firestore_get_document", map[string]any{"path": "bad//path"}, false, "INVALID_ARGUMENT"},
		{"firestore_get_document", map[string]any{}, false, "INVALID_ARGUMENT"},
		{"firestore_get_document", map[string]any{"path": "a/b", "extra": 1}, false, "INVALID_ARGUMENT"},
		{"firestore_get_document", map[string]any{"path": "a/b", "as": map[string]any{"admin": true, "uid": "x"}}, false, "INVALID_ARGUMENT"},
		{"firestore_batch_write", map[string]any{"operations": []any{
			map[string]any{"op": "set", "path": "people/b", "data": map[string]any{"age": 40, "city": "Oslo"}},
			map[string]any{"op": "delete", "path": "people/b"},
			map[string]any{"op": "update", "path": "people/missing", "data": map[string]any{"x": 1}},
			map[string]any{"op": "set", "path": "people/c", "data": map[string]any{}},
		}}, false, "NOT_FOUND"},
		{"firestore_delete_document", map[string]any{"path": "accounts/alice", "as": alice}, false, "PERMISSION_DENIED"},
	}
	for i, st := range steps {
		r := e.call(st.tool, st.args)
		if r.OK != st.ok || r.errCode() != st.code {
			t.Fatalf("step %d %s: %s", i, st.tool, js(r))
		}
		if st.code == "PERMISSION_DENIED" && (!r.recoverable() || r.Data["debugMessages"] == nil) {
			t.Fatalf("step %d: denial without explanation: %s", i, js(r))
		}
		if st.tool == "firestore_batch_write" && r.Data["failedAt"].(float64) != 2 {
			t.Fatalf("batch stopped at %v", r.Data["failedAt"])
		}
	}
	r := e.call("firestore_query_where", map[string]any{"collection": "people", "where": []any{map[string]any{"field": "city", "op": "==", "value": "Oslo"}}, "orderBy": "age desc"})
	if !r.OK || r.Data["count"].(float64) != 1 {
		t.Fatalf("query: %s", js(r))
	}
	doc := r.Data["documents"].([]any)[0].(map[string]any)
	if doc["path"] != "people/a" || doc["data"].(map[string]any)["age"].(float64) != 31 {
		t.Fatalf("query result: %s", js(r))
	}
	if r := e.call("firestore_query_where", map[string]any{"collection": "people", "where": []any{map[string]any{"field": "age", "op": "=~", "value": 1}}}); r.errCode() != "INVALID_ARGUMENT" {
		t.Fatalf("bad op: %s", js(r))
	}
	r = e.call("firestore_list_documents", map[string]any{"collection": "people", "orderBy": "age", "limit": 1})
	if !r.OK || r.Data["count"].(float64) != 1 || r.Data["documents"].([]any)[0].(map[string]any)["data"].(map[string]any)["age"].(float64) != 20 {
		t.Fatalf("list: %s", js(r))
	}
	if r := e.call("firestore_list_documents", map[string]any{"collection": "accounts", "as": alice}); r.errCode() != "PERMISSION_DENIED" {
		t.Fatalf("list as alice (rules are not filters): %s", js(r))
	}
	if r := e.call("firestore_delete_document", map[string]any{"path": "people/a"}); !r.OK {
		t.Fatal(js(r))
	}
	if r := e.call("firestore_get_document", map[string]any{"path": "people/a"}); !r.OK || r.Data["exists"] != false {
		t.Fatal(js(r))
	}
	// Integers stay integers through the tools.
	e.call("firestore_create_document", map[string]any{"path": "n/x", "data": map[string]any{"i": 1, "f": 1.5}})
	d, _ := testfs.Of(e.sb).Admin().GetDocument(context.Background(), "n/x")
	if fmt.Sprintf("%T", d["i"]) != "json.Number" || fmt.Sprint(d["i"]) != "1" {
		t.Fatalf("integer stored as %T %v", d["i"], d["i"])
	}
}

func TestRulesTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{RTDB: func() (string, any) {
		return rtdbRules, map[string]any{"users": map[string]any{"alice": map[string]any{"name": "A"}}}
	}})
	r := e.call("firestore_simulate_rules", map[string]any{"source": testRules, "testCases": []any{
		map[string]any{"description": "owner reads", "expectation": "ALLOW", "method": "get", "path": "accounts/alice", "auth": alice, "resource": map[string]any{"balance": 1}},
		map[string]any{"description": "stranger reads", "expectation": "ALLOW", "method": "get", "path": "accounts/alice", "auth": map[string]any{"uid": "bob"}, "resource": map[string]any{"balance": 1}},
	}})
	if r.OK || r.Summary != "1/2 test cases passed" || r.Data["failed"].(float64) != 1 {
		t.Fatalf("simulate: %s", js(r))
	}
	if r := e.call("firestore_simulate_rules", map[string]any{"source": "nope {", "testCases": []any{}}); r.errCode() != "PARSE_FAILED" {
		t.Fatalf("simulate bad source: %s", js(r))
	}
	if r := e.call("firestore_lint_rules", map[string]any{"source": testRules}); !r.OK {
		t.Fatalf("lint clean: %s", js(r))
	}
	r = e.call("firestore_lint_rules", map[string]any{"source": "rules_version = '2';\nservice cloud.firestore { match /databases/{d}/documents { match /{x=**} { allow read, write: if true; } } }"})
	if r.OK || !strings.Contains(js(r.Data["diagnostics"]), "RECURSIVE_WILDCARD_OPEN") {
		t.Fatalf("lint open: %s", js(r))
	}
	r = e.call("rules_stdlib_list", map[string]any{"service": "storage"})
	if !r.OK || !strings.Contains(js(r.Data), "firestore.get") || strings.Contains(js(r.Data), `"key":"getAfter"`) {
		t.Fatalf("storage stdlib: %s", r.Summary)
	}
	if r := e.call("firestore_rules_stdlib_get", map[string]any{"key": "string.matches"}); !r.OK || r.Data["example"] == "" {
		t.Fatalf("stdlib get: %s", js(r))
	}
	if r := e.call("rules_stdlib_get", map[string]any{"key": "matches"}); r.errCode() != "UNKNOWN_KEY" || !strings.Contains(js(r.Data), "string.matches") {
		t.Fatalf("stdlib unknown: %s", js(r))
	}
	if r := e.call("firestore_rules_stdlib_list", nil); !r.OK {
		t.Fatal(js(r))
	}
	r = e.call("rtdb_simulate_access", map[string]any{"operation": "read", "path": "/users/alice", "auth": alice})
	if !r.OK || r.Data["allowed"] != true {
		t.Fatalf("rtdb read: %s", js(r))
	}
	r = e.call("rtdb_simulate_access", map[string]any{"operation": "write", "path": "/users/alice", "auth": alice, "newData": map[string]any{"age": 3}})
	if r.OK || r.Data["allowed"] != false {
		t.Fatalf("rtdb invalid write: %s", js(r))
	}
	e2 := newEnv(t, Options{})
	if r := e2.call("rtdb_simulate_access", map[string]any{"operation": "read", "path": "/x"}); r.errCode() != "NO_ACTIVE_RULES" || !r.recoverable() {
		t.Fatalf("no rtdb rules: %s", js(r))
	}
	if r := e2.call("rtdb_simulate_access", map[string]any{"operation": "read", "path": "/x", "rules": `{"rules": {".read": true}}`}); !r.OK {
		t.Fatalf("inline rtdb rules: %s", js(r))
	}
	e.create()
	e.call("firestore_simulator_execute", map[string]any{"method": "delete", "path": "accounts/bob", "auth": alice})
	r = e.call("sandbox_inspect", map[string]any{"recentEventLimit": 5})
	rules := r.Data["rules"].(map[string]any)
	if !r.OK || rules["loaded"] != true || r.Data["documentCount"].(float64) != 2 || len(r.Data["recentDenials"].([]any)) != 1 {
		t.Fatalf("inspect: %s", js(r))
	}
}

func TestDiscoverTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	ctx := context.Background()
	for i := range 8 {
		for j := range 3 {
			testfs.Of(e.sb).Admin().SetDocument(ctx, fmt.Sprintf("users/u%d/posts/p%d", i, j), map[string]any{"title": strings.Repeat("t", 40), "likes": j})
		}
		testfs.Of(e.sb).Admin().SetDocument(ctx, fmt.Sprintf("users/u%d", i), map[string]any{"name": fmt.Sprint("user", i), "role": []string{"admin", "member"}[i%2]})
	}
	r := e.call("firestore_discover_paths", map[string]any{})
	schemas, _ := r.Data["schemas"].(map[string]any)
	if !r.OK || r.Data["complete"] != true || len(schemas) != 2 {
		t.Fatalf("discover: %s", js(r))
	}
	posts := schemas["users/{userId}/posts"].(map[string]any)
	likes := posts["fields"].(map[string]any)["likes"].(map[string]any)
	if posts["collections"].(float64) != 8 || likes["types"].([]any)[0].(map[string]any)["type"] != "integer" {
		t.Fatalf("posts schema: %s", js(posts))
	}
	if role := schemas["users"].(map[string]any)["fields"].(map[string]any)["role"].(map[string]any); role["enumCandidate"] == nil {
		t.Fatalf("role: %s", js(role))
	}
	// A small byte budget pauses; the continuation resumes to the same result.
	r = e.call("firestore_discover_paths", map[string]any{"maxBatchBytes": 1024})
	batches := 1
	for r.Data["complete"] != true {
		tok, _ := r.Data["continuation"].(string)
		if !r.OK || !strings.HasPrefix(tok, "disc_") {
			t.Fatalf("paused without continuation: %s", js(r))
		}
		r = e.call("firestore_discover_paths", map[string]any{"continuation": tok})
		batches++
		if batches > 20 {
			t.Fatal("no progress")
		}
	}
	if batches < 2 || js(r.Data["schemas"]) != js(schemas) {
		t.Fatalf("resumed after %d batches: %s", batches, js(r.Data["schemas"]))
	}
	if r := e.call("firestore_discover_paths", map[string]any{"continuation": "disc_bogus"}); r.errCode() != "SESSION_MALFORMED_TOKEN" || !r.recoverable() || r.Data["recoveryHint"] == "" {
		t.Fatalf("bad token: %s", js(r))
	}
	if r := e.call("firestore_discover_paths", map[string]any{"maxBatchBytes": 10}); r.errCode() != "INVALID_ARGUMENT" {
		t.Fatalf("bad option: %s", js(r))
	}
	if r := e.call("firestore_discover_paths", map[string]any{"dryRun": true}); !r.OK || r.Data["dryRunCostEstimate"] == nil || r.Data["readOps"].(float64) != 0 {
		t.Fatalf("dry run: %s", js(r))
	}
	r = e.call("firestore_find_collection_group", map[string]any{"collectionId": "posts", "limit": 5})
	hosts := r.Data["hosts"].([]any)
	if !r.OK || len(hosts) != 1 || hosts[0].(map[string]any)["templatePath"] != "users/{userId}/posts" || r.Data["limitWasReached"] != true {
		t.Fatalf("collection group: %s", js(r))
	}
}

func TestResources(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create()
	e.call("firestore_simulator_execute", map[string]any{"method": "delete", "path": "accounts/bob", "auth": alice})
	res, err := e.sess.ListResources(context.Background(), nil)
	// The rules, the events and one state resource per service.
	if err != nil || len(res.Resources) != 3+len(e.sb.Services()) {
		t.Fatalf("%v %d", err, len(res.Resources))
	}
	rr, err := e.sess.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: ServiceStateURI("firestore")})
	if err != nil || !strings.Contains(rr.Contents[0].Text, `"documents"`) {
		t.Fatalf("firestore state resource: %v %+v", err, rr)
	}
	rr, err = e.sess.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: ResourceFirestoreRules})
	if err != nil || rr.Contents[0].Text != testRules {
		t.Fatalf("rules resource: %v", err)
	}
	rr, err = e.sess.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: ResourceRecentEvents})
	if err != nil {
		t.Fatal(err)
	}
	var evs []event.Event
	if err := json.Unmarshal([]byte(rr.Contents[0].Text), &evs); err != nil || len(evs) == 0 {
		t.Fatalf("events resource: %v %d", err, len(evs))
	}
	if last := evs[len(evs)-1]; last.Request == nil || last.Request.Verdict != event.Deny {
		t.Fatalf("last event %+v", evs[len(evs)-1])
	}
}

// TestHTTP: the server answers over streamable HTTP, built at once
// (Handler) or on the first request (LazyHandler, as pyric serve mounts it).
func TestHTTP(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		handler func(*sandbox.Sandbox) http.Handler
	}{
		{"built at once", func(sb *sandbox.Sandbox) http.Handler { return NewServer(sb, Options{}).Handler() }},
		{"built on the first request", func(sb *sandbox.Sandbox) http.Handler { return LazyHandler(sb, Options{}) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			sb, err := sandbox.Open(testfs.With(sandbox.Options{}))
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close()
			mux := http.NewServeMux()
			mux.Handle("/mcp", c.handler(sb))
			hs := httptest.NewServer(mux)
			defer hs.Close()
			client := sdk.NewClient(&sdk.Implementation{Name: "http-test", Version: "1"}, nil)
			cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: hs.URL + "/mcp"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			tools, err := cs.ListTools(context.Background(), nil)
			if err != nil || len(tools.Tools) != len(allTools) {
				t.Fatalf("%v %d", err, len(tools.Tools))
			}
			if r := callOn(t, cs, "firestore_create_document", map[string]any{"path": "h/1", "data": map[string]any{"v": "x"}}); !r.OK {
				t.Fatal(js(r))
			}
			if r := callOn(t, cs, "firestore_get_document", map[string]any{"path": "h/1"}); r.Data["data"].(map[string]any)["v"] != "x" {
				t.Fatal(js(r))
			}
		})
	}
}
