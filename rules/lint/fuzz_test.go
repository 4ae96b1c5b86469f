package lint

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pyric/pyric/rules/source"
)

// FuzzLint lints arbitrary text as Firestore and Storage rules, compared
// with a previous version and with a test case: it must never panic (or
// fail internally), and every diagnostic must sit inside the file and
// render.
func FuzzLint(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*", "*.rules"))
	for _, path := range files {
		// Large seeds (the generated chains) make mutation slow.
		if b, err := os.ReadFile(path); err == nil && len(b) < 4096 {
			f.Add(string(b))
		}
	}
	for _, s := range []string{
		"", "service", "service cloud.firestore {", "match /a { allow read: if a.b(; }",
		"rules_version = '2'; service cloud.firestore { match /{a=**} { allow read; } }",
		"service firebase.storage { match /b/{x}/o { function f(a) { let a = a; return f(a); } allow write: if f(1) ?. `x${y`; } }",
		"service cloud.firestore { match /a/{b} { allow read: if get(/a/{b}/$(c)).data[0:1].length.size; } }",
	} {
		f.Add(s)
	}
	prev := source.NewFile("prev.rules", "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /a/{b} {\n      allow read: if request.auth != null && resource.data.x == 1;\n    }\n  }\n}\n")
	f.Fuzz(func(t *testing.T, text string) {
		file := source.NewFile("fuzz.rules", text)
		for _, service := range []string{Firestore, Storage} {
			res := Lint(file, Options{Service: service, Previous: prev, Cases: []Case{{Method: "get", Path: "a/b"}, {Method: "list", Path: "a"}}})
			for _, d := range res.Diagnostics {
				if d.Code == CodeInternal {
					t.Fatalf("%s", d.Message)
				}
				sp := d.Span
				if sp.Start.Offset < 0 || sp.End.Offset > len(text) || sp.End.Offset < sp.Start.Offset || !sp.Start.IsValid() {
					t.Fatalf("diagnostic span out of range: %+v", d)
				}
				_ = source.Render(file, d)
			}
		}
	})
}
