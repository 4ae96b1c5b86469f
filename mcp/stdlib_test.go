package mcp

import (
	"fmt"
	"testing"

	"github.com/pyric/pyric/rules/lint"
	"github.com/pyric/pyric/rules/source"
)

// TestStdlibExamples lints every catalog example inside a rule of each
// service it is listed for: an entry the engines don't know (undefined
// function, hallucinated method, wrong context) fails here.
func TestStdlibExamples(t *testing.T) {
	t.Parallel()
	for _, e := range stdlib {
		for _, svc := range e.Services {
			var src string
			opts := lint.Options{Service: lint.Firestore}
			if svc == "firestore" {
				src = fmt.Sprintf("rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /x/{id} {\n      allow get: if %s;\n    }\n  }\n}\n", e.Example)
			} else {
				opts.Service = lint.Storage
				src = fmt.Sprintf("rules_version = '2';\nservice firebase.storage {\n  match /b/{bucket}/o {\n    match /x/{id} {\n      allow read: if %s;\n    }\n  }\n}\n", e.Example)
			}
			res := lint.Lint(source.NewFile("t.rules", src), opts)
			for _, d := range res.Diagnostics {
				if d.Severity == source.Error {
					t.Errorf("%s (%s): %s: %s", e.Key, svc, d.Code, d.Message)
				}
			}
		}
	}
}
