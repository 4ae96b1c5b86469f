package storage

import (
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

// FuzzDecide compiles arbitrary rules text and, when it compiles, decides
// a request built from the other inputs in both modes: nothing may panic
// (Decide would turn a panic into an "internal error" note, which fails
// the target too), diagnostics stay inside the file, and every decision is
// a verdict with a consistent deciding index.
func FuzzDecide(f *testing.F) {
	seeds := []string{
		cond("read, write", "request.auth != null && request.resource.size < 5 * 1024 * 1024"),
		cond("read", "resource.metadata.owner == request.auth.uid || resource.metadata['x'] == 1"),
		cond("write", "request.resource.contentType.matches('image/.*') && request.resource.metadata.keys().hasAll(['a'])"),
		cond("get, delete", "request.time < resource.timeCreated + duration.value(1, 'h') && resource.generation is int"),
		cond("read", "firestore.get(/databases/(default)/documents/users/$(request.auth.uid)).data.admin == true"),
		cond("create", "firestore.exists(/databases/(default)/documents/a/$(allPaths[0])) ? resource == null : 1 / 0 == 0"),
		"rules_version = '1';\nservice firebase.storage { match /b/{bucket}/o { match /{a}/{b=**} { function f(x) { let y = x + 1; return y > 2; } allow read: if f(request.path.size()); } } }",
		"function g() { return request.method in ['get', 'list']; }\nservice firebase.storage { match /b/{b}/o/{p=**} { allow read: if g(); } }",
		"service cloud.firestore { match /databases/{d}/documents/{doc=**} { allow read; } }",
		"service firebase.storage { match /b/{bucket}/o { allow list: if",
		"",
	}
	for i, s := range seeds {
		f.Add(s, []string{Get, List, Create, Update, Delete}[i%5], "users/alice/a.png", "alice", int64(i*1000), "image/png", i%2 == 0)
	}
	f.Add("service firebase.storage { match /b/{bucket}/o/{f} { allow read: if f[0:100] == ''; } }", "get", "//x//", "", int64(-1), "", true)
	docs := FirestoreLookupFunc(func(path string) (value.Map, bool, error) {
		if strings.HasPrefix(path, "users/") {
			return value.Map{"admin": value.Bool(true)}, true, nil
		}
		return nil, false, nil
	})
	f.Fuzz(func(t *testing.T, text, method, path, uid string, size int64, contentType string, testAPI bool) {
		file := source.NewFile("fuzz.rules", text)
		rs, diags := Compile(file)
		for _, d := range diags {
			if d.Span.Start.Offset < 0 || d.Span.End.Offset > len(text) || d.Span.End.Offset < d.Span.Start.Offset {
				t.Fatalf("diagnostic span out of range: %+v", d)
			}
			_ = source.Render(file, d)
		}
		if rs == nil {
			return
		}
		var auth *Auth
		if uid != "" {
			auth = &Auth{UID: uid, Token: map[string]any{"admin": true}}
		}
		obj := &Object{Name: path, Size: size, ContentType: contentType, Metadata: map[string]string{"owner": uid},
			TimeCreated: time.Unix(1700000000, 0), Generation: size}
		for _, mode := range []bool{testAPI, !testAPI} {
			req := &Request{Method: method, Path: path, Auth: auth, Resource: obj, Incoming: obj,
				Time: time.Unix(1700000100, 0), Firestore: docs, TestAPI: mode}
			d := rs.Decide(req)
			for _, n := range d.Notes {
				if strings.HasPrefix(n, "internal error") {
					t.Fatalf("Decide panicked: %s", n)
				}
			}
			switch d.Outcome {
			case "ALLOW", "DENY", "UNSUPPORTED":
			default:
				t.Fatalf("outcome %q", d.Outcome)
			}
			if d.Deciding >= len(d.Trace) || (d.Outcome == "ALLOW" && d.Deciding < 0) {
				t.Fatalf("deciding %d of %d rules for %s", d.Deciding, len(d.Trace), d.Outcome)
			}
			if !mode && d.Lookups > MaxFirestoreLookups {
				t.Fatalf("a real request read %d documents", d.Lookups)
			}
		}
	})
}
