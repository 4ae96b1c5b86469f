package rtdb

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
)

func mustCompile(t testing.TB, src string) *Ruleset {
	t.Helper()
	rs, diags := Compile(source.NewFile("database.rules.json", src))
	if rs == nil {
		t.Fatalf("compile: %v", diags)
	}
	return rs
}

func decode(t testing.TB, s string) any {
	t.Helper()
	if s == "" {
		return nil
	}
	var v any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

// TestSemantics covers cascade, validation and location binding. Each case
// is a ruleset, the database before, and one request.
func TestSemantics(t *testing.T) {
	t.Parallel()
	alice := &Auth{UID: "alice", Provider: "password"}
	tests := []struct {
		name    string
		rules   string
		data    string
		op      Operation
		path    string
		newData string
		auth    *Auth
		allow   bool
		note    string // a substring of the notes, when set
	}{
		{name: "read grant cascades to descendants",
			rules: `{".read": true, "a": {".read": false}}`, op: Read, path: "/a/b", allow: true},
		{name: "write grant cascades and a deeper false can't revoke it",
			rules: `{".write": "auth != null", "inner": {".write": false}}`, op: Write, path: "/inner/deep", newData: `1`, auth: alice, allow: true},
		{name: "no rule at all denies",
			rules: `{"a": {".read": true}}`, op: Read, path: "/b", allow: false, note: "denies by default"},
		{name: "a grant below the requested path does not grant the parent",
			rules: `{"a": {"b": {".read": true}}}`, op: Read, path: "/a", allow: false},
		{name: "a grant deeper on the path applies",
			rules: `{".read": false, "a": {"b": {".read": true}}}`, op: Read, path: "/a/b/c", allow: true},
		{name: "an erroring rule denies only itself",
			rules: `{".read": "auth.uid === 'x'", "a": {".read": true}}`, op: Read, path: "/a", allow: true},
		{name: "literal child wins over its wildcard sibling",
			rules: `{"a": {"$k": {".read": true}, "special": {".read": false}}}`, op: Read, path: "/a/special", allow: false},
		{name: "wildcard matches other keys",
			rules: `{"a": {"$k": {".read": true}, "special": {".read": false}}}`, op: Read, path: "/a/other", allow: true},
		{name: "validate vetoes a granted write",
			rules: `{".write": true, "a": {".validate": false}}`, op: Write, path: "/a", newData: `1`, allow: false, note: ".validate at /a failed"},
		{name: "validate does not cascade to children",
			rules: `{".write": true, "a": {".validate": "newData.hasChildren()", "b": {}}}`, op: Write, path: "/a/b/c", newData: `1`, allow: true},
		{name: "validate runs at ancestors on the merged post-write value",
			rules: `{".write": true, "a": {".validate": "newData.hasChild('x')"}}`, data: `{"a": {"x": 1}}`, op: Write, path: "/a/y", newData: `2`, allow: true},
		{name: "ancestor validate fails when the merge lacks the child",
			rules: `{".write": true, "a": {".validate": "newData.hasChild('x')"}}`, op: Write, path: "/a/y", newData: `2`, allow: false},
		{name: "root validate sees the whole post-write database",
			rules: `{".write": true, ".validate": "newData.child('a/y').val() === 2"}`, op: Write, path: "/a/y", newData: `2`, allow: true},
		{name: "a write that empties an ancestor skips its validate",
			rules: `{".write": true, "a": {".validate": "newData.hasChild('x')"}}`, data: `{"a": {"x": 1}}`, op: Write, path: "/a/x", allow: true},
		{name: "a delete that leaves the ancestor non-empty still validates it",
			rules: `{".write": true, "a": {".validate": "newData.hasChild('x')"}}`, data: `{"a": {"x": 1, "y": 2}}`, op: Write, path: "/a/x", allow: false},
		{name: "a delete skips the validate at its location",
			rules: `{".write": true, "a": {".validate": "newData.isString()"}}`, data: `{"a": 1}`, op: Write, path: "/a", allow: true},
		{name: "child validate runs only for children present in newData",
			rules: `{".write": true, "p": {"$k": {"opt": {".validate": false}}}}`, op: Write, path: "/p/k1", newData: `{"name": 1}`, allow: true},
		{name: "child validate runs for a present child",
			rules: `{".write": true, "p": {"$k": {"opt": {".validate": false}}}}`, op: Write, path: "/p/k1", newData: `{"opt": 1}`, allow: false, note: ".validate at /p/$k/opt failed for /p/k1/opt"},
		{name: "$other validate false rejects unknown children",
			rules: `{".write": true, "w": {"title": {".validate": true}, "$other": {".validate": false}}}`, op: Write, path: "/w", newData: `{"title": "x", "size": 1}`, allow: false},
		{name: "$other validate false accepts known children",
			rules: `{".write": true, "w": {"title": {".validate": true}, "$other": {".validate": false}}}`, op: Write, path: "/w", newData: `{"title": "x"}`, allow: true},
		{name: "nested wildcards bind in descendants",
			rules: `{".write": true, "rooms": {"$room": {"members": {"$uid": {".validate": "newData.val() === $room + ':' + $uid"}}}}}`,
			op:    Write, path: "/rooms/r1", newData: `{"members": {"u1": "r1:u1", "u2": "r1:u2"}}`, allow: true},
		{name: "nested wildcard mismatch denies",
			rules: `{".write": true, "rooms": {"$room": {"members": {"$uid": {".validate": "newData.val() === $room + ':' + $uid"}}}}}`,
			op:    Write, path: "/rooms/r1", newData: `{"members": {"u1": "r1:u1", "u2": "r2:u2"}}`, allow: false},
		{name: "newData at a root rule is the whole post-write tree",
			rules: `{".write": "newData.child('item/owner').val() === auth.uid"}`, op: Write, path: "/item", newData: `{"owner": "alice"}`, auth: alice, allow: true},
		{name: "newData at a root rule does not see the written value at its root",
			rules: `{".write": "newData.hasChildren(['owner'])"}`, op: Write, path: "/item", newData: `{"owner": "alice"}`, auth: alice, allow: false},
		{name: "data is the pre-write value at the rule's location",
			rules: `{"c": {".write": "newData.val() === data.val() + 1"}}`, data: `{"c": 4}`, op: Write, path: "/c", newData: `5`, allow: true},
		{name: "create-only write denies an update",
			rules: `{"c": {"$id": {".write": "!data.exists()"}}}`, data: `{"c": {"x": 1}}`, op: Write, path: "/c/x", newData: `2`, allow: false},
		{name: "create-only write allows a create",
			rules: `{"c": {"$id": {".write": "!data.exists()"}}}`, data: `{"c": {"x": 1}}`, op: Write, path: "/c/y", newData: `2`, allow: true},
		{name: "null children and empty objects do not exist",
			rules: `{".read": "!data.child('a').exists() && !data.child('b').exists() && data.child('c/0').val() === 'z'"}`,
			data:  `{"a": {"x": null}, "b": {}, "c": ["z"]}`, op: Read, path: "/", allow: true},
		{name: "priority is read from .priority",
			rules: `{".read": "data.child('p').getPriority() === 7 && data.child('p').val() === 'v'"}`,
			data:  `{"p": {".value": "v", ".priority": 7}}`, op: Read, path: "/", allow: true},
		{name: "deleting a child of a leaf leaves the leaf",
			rules: `{".write": true, "a": {".validate": "newData.val() === 6"}}`, data: `{"a": 5}`, op: Write, path: "/a/b", allow: false},
		{name: "a leaf with a deleted child has no children",
			rules: `{".write": true, "a": {".validate": "!newData.hasChildren() && newData.isNumber()"}}`, data: `{"a": 5}`, op: Write, path: "/a/b", allow: true},
		{name: "writing a child under a leaf replaces it with an object",
			rules: `{".write": true, "a": {".validate": "newData.hasChildren() && !newData.isNumber()"}}`, data: `{"a": 5}`, op: Write, path: "/a/b", newData: `1`, allow: true},
		{name: "read at the root",
			rules: `{".read": "root.child('open').val() === true"}`, data: `{"open": true}`, op: Read, path: "", allow: true},
	}
	for _, tt := range tests {
		rs := mustCompile(t, `{"rules": `+tt.rules+`}`)
		d, err := rs.Evaluate(Request{Operation: tt.op, Path: tt.path, Auth: tt.auth,
			Data: decode(t, tt.data), NewData: decode(t, tt.newData), Now: testNow})
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if d.Allowed != tt.allow {
			t.Errorf("%s: allowed = %v, want %v\nrules: %+v\nnotes: %v", tt.name, d.Allowed, tt.allow, d.Rules, d.Notes)
		}
		if tt.note != "" && !strings.Contains(strings.Join(d.Notes, "\n"), tt.note) {
			t.Errorf("%s: notes %q lack %q", tt.name, d.Notes, tt.note)
		}
		if d.Deciding >= len(d.Rules) {
			t.Errorf("%s: deciding index %d out of range", tt.name, d.Deciding)
		}
		if d.Allowed && d.Rules[d.Deciding].Verdict != sim.VerdictAllow {
			t.Errorf("%s: allowed, but the deciding rule is %+v", tt.name, d.Rules[d.Deciding])
		}
	}
}

func TestDecisionExplanation(t *testing.T) {
	t.Parallel()
	src := "{\n  \"rules\": {\n    \".read\": \"auth.uid === 'x'\",\n    \"users\": {\n      \"$uid\": {\n        \".read\": \"$uid === auth.uid\"\n      }\n    }\n  }\n}\n"
	rs := mustCompile(t, src)
	d, err := rs.Evaluate(Request{Operation: Read, Path: "/users/alice", Auth: &Auth{UID: "alice"}, Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Allowed || len(d.Rules) != 2 || d.Deciding != 1 {
		t.Fatalf("decision = %+v", d)
	}
	if d.Bindings["$uid"] != "alice" {
		t.Errorf("bindings = %v", d.Bindings)
	}
	r := d.Rules[1]
	if r.MatchPath != "/users/$uid" || r.Operations[0] != ".read" || r.Line != 6 || r.Column != 19 || r.Condition != "$uid === auth.uid" {
		t.Errorf("rule = %+v", r)
	}
	if !strings.Contains(r.Message, "at /users/alice ($uid = 'alice')") {
		t.Errorf("message = %q", r.Message)
	}
	want := []sim.Expr{
		{Source: "$uid === auth.uid", Line: 6, Column: 19, Depth: 0, Value: "true"},
		{Source: "$uid", Line: 6, Column: 19, Depth: 1, Value: "'alice'"},
		{Source: "auth.uid", Line: 6, Column: 28, Depth: 1, Value: "'alice'"},
		{Source: "auth", Line: 6, Column: 28, Depth: 2, Value: `{"provider":"","token":{},"uid":"alice"}`},
	}
	if len(r.Expressions) != len(want) {
		t.Fatalf("trace = %+v", r.Expressions)
	}
	for i := range want {
		if r.Expressions[i] != want[i] {
			t.Errorf("trace[%d] = %+v, want %+v", i, r.Expressions[i], want[i])
		}
	}
	if d.Rules[0].Verdict != sim.VerdictDeny || d.Rules[0].Line != 3 || d.Rules[0].Column != 15 {
		t.Errorf("root rule = %+v", d.Rules[0])
	}
	// Short-circuited operands are marked skipped.
	rs = mustCompile(t, `{"rules": {".read": "false && data.exists()"}}`)
	d, _ = rs.Evaluate(Request{Operation: Read, Path: "/", Trace: true})
	ex := d.Rules[0].Expressions
	if len(ex) != 2 || !ex[1].Skipped || ex[1].Source != "data.exists()" {
		t.Errorf("short-circuit trace = %+v", ex)
	}
}

func TestUpdates(t *testing.T) {
	t.Parallel()
	rs := mustCompile(t, `{"rules": {"a": {".write": true, "$k": {".validate": "newData.isNumber()"}}, "b": {".write": false}}}`)
	tests := []struct {
		updates map[string]any
		allow   bool
	}{
		{map[string]any{"a/x": 1, "a/y": 2}, true},
		{map[string]any{"a/x": 1, "a/y": "s"}, false},
		{map[string]any{"a/x": 1, "b/y": 2}, false},
		{map[string]any{"a/x": nil}, true},
	}
	for _, tt := range tests {
		d, err := rs.Evaluate(Request{Operation: Write, Path: "/", Updates: tt.updates})
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed != tt.allow {
			t.Errorf("update %v: allowed = %v, want %v (%v)", tt.updates, d.Allowed, tt.allow, d.Notes)
		}
	}
	_, err := rs.Evaluate(Request{Operation: Write, Path: "/", Updates: map[string]any{"a": 1, "a/b": 2}})
	if !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("overlapping update: err = %v", err)
	}
}

// TestUpdateOfManyChildren: the post-write view of an update changing
// more children of one node than an overlay lists before it keeps a map
// reads each of them, the untouched ones and the deleted ones right.
func TestUpdateOfManyChildren(t *testing.T) {
	t.Parallel()
	rs := mustCompile(t, `{"rules": {".write": true, "a": {".validate": "newData.child('k0').val() == 0 && newData.child('k19').val() == 19 && newData.child('old').val() == 'kept' && !newData.child('gone').exists() && newData.child('k7').val() == 7"}}}`)
	data := map[string]any{"a": map[string]any{"old": "kept", "gone": true, "k7": "before"}}
	for _, n := range []int{3, 20} {
		updates := map[string]any{"a/gone": nil}
		for i := range n {
			updates[fmt.Sprintf("a/k%d", i)] = float64(i)
		}
		if n < 20 {
			updates["a/k19"] = 19.0
			updates["a/k7"] = 7.0
		}
		d, err := rs.Evaluate(Request{Operation: Write, Path: "/", Data: data, Updates: updates})
		if err != nil || !d.Allowed {
			t.Errorf("%d children: allowed %v, %v %v", n, d.Allowed, err, d.Notes)
		}
		updates["a/old"] = nil
		if d, _ := rs.Evaluate(Request{Operation: Write, Path: "/", Data: data, Updates: updates}); d.Allowed {
			t.Errorf("%d children: allowed an update deleting old", n)
		}
	}
}

func TestInvalidRequests(t *testing.T) {
	t.Parallel()
	rs := mustCompile(t, `{"rules": {".read": true}}`)
	for _, p := range []string{"/a.b", "/a/$x", "/a#", "/a[0]", "/a\x01"} {
		if _, err := rs.Evaluate(Request{Operation: Read, Path: p}); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("path %q: err = %v, want ErrInvalidPath", p, err)
		}
	}
	if _, err := rs.Evaluate(Request{Operation: "delete", Path: "/"}); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("bad operation: err = %v", err)
	}
}

// TestEvaluateDoesNotModifyData guards the promise that trees are read in
// place.
func TestEvaluateDoesNotModifyData(t *testing.T) {
	t.Parallel()
	rs := mustCompile(t, `{"rules": {".write": true, "a": {".validate": "newData.child('b').val() === 2"}}}`)
	data := decode(t, `{"a": {"b": 1, "c": 3}}`)
	before, _ := json.Marshal(data)
	d, err := rs.Evaluate(Request{Operation: Write, Path: "/a/b", NewData: 2.0, Data: data})
	if err != nil || !d.Allowed {
		t.Fatalf("write: %v %+v", err, d)
	}
	after, _ := json.Marshal(data)
	if string(before) != string(after) {
		t.Errorf("data changed: %s → %s", before, after)
	}
}

// TestDataReads lists the locations a read's rules observe, so a database
// knows which writes can change a standing listen's verdict.
func TestDataReads(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, rules, path string
		want              []string
	}{
		{"auth only observes nothing", `{"rules": {"a": {".read": "auth == null"}}}`, "/a", nil},
		{"root child val", `{"rules": {"docs": {"$d": {".read": "root.child('acl').child($d).val() === true"}}}}`, "/docs/x", []string{"/acl/x"}},
		{"data and hasChild", `{"rules": {"a": {".read": "data.exists() || data.parent().hasChild('flag')"}}}`, "/a", []string{"/a", "/flag"}},
		{"a denying ancestor rule is recorded too", `{"rules": {".read": "root.child('open').val() == true", "b": {".read": "data.child('c').exists()"}}}`, "/b", []string{"/open", "/b/c"}},
		{"short-circuit skips the right side", `{"rules": {"a": {".read": "auth != null && data.exists()"}}}`, "/a", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dec, err := mustCompile(t, tc.rules).Evaluate(Request{Operation: Read, Path: tc.path})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range dec.DataReads {
				got = append(got, joinPath(r))
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("DataReads = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestQueryVariables evaluates production's query.* members in .read
// rules (the documented examples: query.orderByKey with a limit cap, and
// query.equalTo on the owner's uid).
func TestQueryVariables(t *testing.T) {
	t.Parallel()
	rs := mustCompile(t, `{"rules": {
		"messages": {".read": "query.orderByKey && query.limitToFirst <= 1000"},
		"items": {".read": "auth != null && query.orderByChild === 'owner' && query.equalTo === auth.uid"},
		"last": {".read": "query.limitToLast === 5 && query.limitToFirst === null && !query.orderByValue && !query.orderByPriority"},
		"range": {".read": "query.startAt === 10 && query.endAt === 'z' && query.equalTo == null"},
		"val": {".read": "query.orderByValue === true"},
		"prio": {".read": "query.orderByPriority"}
	}}`)
	alice := &Auth{UID: "alice"}
	tests := []struct {
		name  string
		path  string
		q     *Query
		auth  *Auth
		allow bool
	}{
		{"orderByKey under the cap", "/messages", &Query{OrderByKey: true, LimitToFirst: 1000}, nil, true},
		{"orderByKey over the cap", "/messages", &Query{OrderByKey: true, LimitToFirst: 1001}, nil, false},
		{"no limit: null <= 1000 is an error", "/messages", &Query{OrderByKey: true}, nil, false},
		{"a plain read is no query", "/messages", nil, nil, false},
		{"equalTo own uid", "/items", &Query{OrderByChild: "owner", StartAt: "alice", EndAt: "alice", EqualTo: "alice"}, alice, true},
		{"equalTo another uid", "/items", &Query{OrderByChild: "owner", EqualTo: "bob"}, alice, false},
		{"ordered by another child", "/items", &Query{OrderByChild: "author", EqualTo: "alice"}, alice, false},
		{"limitToLast", "/last", &Query{LimitToLast: 5}, nil, true},
		{"range bounds", "/range", &Query{StartAt: 10.0, EndAt: "z"}, nil, true},
		{"orderByValue", "/val", &Query{OrderByValue: true}, nil, true},
		{"orderByPriority", "/prio", &Query{OrderByPriority: true, LimitToFirst: 1}, nil, true},
		{"orderByPriority false on a plain read", "/prio", nil, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dec, err := rs.Evaluate(Request{Operation: Read, Path: tc.path, Query: tc.q, Auth: tc.auth})
			if err != nil {
				t.Fatal(err)
			}
			if dec.Allowed != tc.allow {
				t.Errorf("allowed = %v, want %v (%v)", dec.Allowed, tc.allow, dec.Notes)
			}
		})
	}
}
