package firestore

import (
	"testing"
	"time"

	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

// FuzzEval evaluates arbitrary conditions against a fixed request: the
// evaluator must never panic and always reach a decision.
func FuzzEval(f *testing.F) {
	for _, e := range curated {
		f.Add(e)
	}
	f.Add("get(/databases/$(database)/documents/a/$(request.auth.uid)).data.x[1:2].size() > 0 || exists(/a)")
	f.Add("[1, 2][0:1] + 'a' in {'a': 1}.keys().toSet().union([].toSet())")
	now := time.Now()
	f.Fuzz(func(t *testing.T, cond string) {
		src := "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    function f(a) { let b = a; return b; }\n    match /{doc=**} {\n      allow get, list, create: if " + cond + ";\n    }\n  }\n}\n"
		rs, _ := Compile(source.NewFile("firestore.rules", src))
		if rs == nil {
			return
		}
		for _, m := range []string{Get, List, Create} {
			d := rs.Decide(&Request{Method: m, Path: "a/b", Time: now, Auth: &Auth{UID: "u", Token: map[string]any{"t": 1}},
				Resource: &Doc{Path: "a/b", Data: oracleDoc}, After: oracleDoc,
				Get: LookupFunc(func(p string) (value.Map, bool, error) {
					return value.Map{"x": value.List{value.Int(1)}}, p == "a/u", nil
				})})
			if d.Outcome == "" {
				t.Fatal("no decision")
			}
		}
	})
}
