package rtdb

import (
	"testing"

	"github.com/pyric/pyric/rules/source"
)

// FuzzCompileRules compiles arbitrary files and, when they compile,
// evaluates a few requests: neither step may panic, and diagnostics must
// carry positions inside the file.
func FuzzCompileRules(f *testing.F) {
	seeds := []string{
		`{"rules": {".read": "auth != null", ".write": false}}`,
		`{"rules": {"users": {"$uid": {".write": "$uid === auth.uid", ".validate": "newData.hasChildren(['name'])"}}}}`,
		`{"rules": {"a": {".validate": "newData.val().matches(/^[a-z]+$/i) && newData.val().length < 5"}}}`,
		`{"rules": {".read": "root.child('x').child(auth.uid).exists() || data.parent() === null"}}`,
		`// c` + "\n" + `{"rules": {"$a": {"$b": {".write": "$a + $b === 'xy' ? true : now > 0"}}}}`,
		`{"rules": {".write": "newData.val()['k']"}}`,
		`{"rules": {".indexOn": ["a"], "a": {".read": "\u0061uth != null"}}}`,
		`{"rules": {".read": "`, `{`, `[]`, `{"rules": {"a": 1}}`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	data := map[string]any{"a": map[string]any{"b": 1.0, "x": "s"}, "users": map[string]any{"u": map[string]any{"name": "n"}}}
	f.Fuzz(func(t *testing.T, text string) {
		file := source.NewFile("fuzz.json", text)
		rs, diags := Compile(file)
		for _, d := range diags {
			if d.Span.Start.Offset < 0 || d.Span.End.Offset > len(text) || d.Span.End.Offset < d.Span.Start.Offset {
				t.Fatalf("diagnostic span out of range: %+v", d)
			}
			_ = source.Render(file, d)
		}
		_ = Lint(file)
		if rs == nil {
			return
		}
		auth := &Auth{UID: "u", Provider: "anonymous"}
		for _, req := range []Request{
			{Operation: Read, Path: "/a/b", Data: data, Auth: auth, Trace: true},
			{Operation: Read, Path: "/users/u", Data: data},
			{Operation: Write, Path: "/a", Data: data, NewData: map[string]any{"b": 2.0, "c": []any{"x"}}, Auth: auth, Trace: true},
			{Operation: Write, Path: "/users/u", Data: data, Auth: auth},
		} {
			if _, err := rs.Evaluate(req); err != nil {
				t.Fatalf("Evaluate(%s %s): %v", req.Operation, req.Path, err)
			}
		}
	})
}
