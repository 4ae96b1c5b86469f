package firestore

import (
	"testing"
	"time"

	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

// TestRecordsBehaveAsMaps evaluates, on the records that stand for
// request, request.auth, request.resource, resource and a get() result,
// every operation that needs the whole map (keys, size, ==, in, diff,
// get with a path, rendering) and the field reads: each must behave as the
// map the record stands for.
func TestRecordsBehaveAsMaps(t *testing.T) {
	conds := []string{
		"request.keys().hasAll(['auth', 'method', 'path', 'resource', 'time']) && request.keys().size() == 5",
		"request.size() == 5 && request.auth.size() == 2 && request.resource.size() == 3",
		"request.auth.keys() == ['token', 'uid']",
		"request.auth == {'uid': 'u', 'token': {'admin': true}}",
		"{'uid': 'u', 'token': {'admin': true}} == request.auth",
		"[request.auth] == [{'uid': 'u', 'token': {'admin': true}}]",
		"request.auth != null && request.auth.token.admin == true",
		"'uid' in request.auth && !('email' in request.auth) && 'resource' in request",
		"request['auth']['uid'] == 'u' && request.get(['auth', 'uid'], 'none') == 'u'",
		"request.get(['auth', 'nope'], 'none') == 'none'",
		"request.auth.diff({'uid': 'v', 'token': {'admin': true}}).changedKeys() == ['uid'].toSet()",
		"{'uid': 'v'}.diff(request.auth).removedKeys() == ['token'].toSet()",
		"request.resource.id == 'x' && request.resource.__name__ == /databases/$(database)/documents/d/x",
		"request.resource.keys() == ['__name__', 'data', 'id']",
		"request.resource.data.n == 2 && request.resource.data.diff(resource.data).changedKeys() == ['n'].toSet()",
		"resource.id == 'x' && resource.keys() == ['__name__', 'data', 'id'] && resource.data == {'n': 1}",
		"get(/databases/$(database)/documents/o/p) == {'data': {'v': 7}, 'id': 'p', '__name__': /databases/$(database)/documents/o/p}",
		"get(/databases/$(database)/documents/o/p).keys().size() == 3 && get(/databases/$(database)/documents/o/p).data.v == 7",
		"request.path == /databases/$(database)/documents/d/x && request.path[4] == 'x'",
		"request.time == request.time && request.time > timestamp.date(2020, 1, 1)",
		"request.method == 'update' && string(request.method) == 'update'",
		"[request.auth, request.auth].toSet().size() == 1",
		"request.auth is map && request is map && resource is map",
		"path('/a/{x}').bind(request.auth.token) == path('/a/{x}')",
	}
	now := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	for _, cond := range conds {
		t.Run(cond, func(t *testing.T) {
			src := "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /d/{id} {\n      allow update: if " + cond + ";\n    }\n  }\n}\n"
			rs, diags := Compile(source.NewFile("firestore.rules", src))
			if rs == nil {
				t.Fatalf("compile: %v", diags)
			}
			req := &Request{Method: Update, Path: "d/x", Time: now,
				Auth:     &Auth{UID: "u", Token: map[string]any{"admin": true}},
				Resource: &Doc{Path: "d/x", Data: value.Map{"n": value.Int(1)}},
				After:    value.Map{"n": value.Int(2)},
				Get: LookupFunc(func(p string) (value.Map, bool, error) {
					return value.Map{"v": value.Int(7)}, p == "o/p", nil
				})}
			var counts [2]int
			for i, traced := range []bool{false, true} {
				d := rs.decide(req, traced)
				if !d.Allowed() {
					t.Errorf("traced %v: denied: %v", traced, d.Notes)
				}
				counts[i] = d.Expressions
			}
			// Untraced runs read member chains in one step; they count
			// every node all the same.
			if counts[0] != counts[1] {
				t.Errorf("expressions: %d untraced, %d traced", counts[0], counts[1])
			}
			// The typed trace holds plain maps, never records.
			d := rs.DecideSteps(req)
			for _, r := range d.Rules {
				for _, s := range r.Steps {
					if _, ok := s.Value.(value.Record); ok {
						t.Fatalf("step %d holds a record", s.Node.Span().Start.Offset)
					}
				}
			}
		})
	}
}
