package firestore

import (
	"encoding/json"
	"strings"
	"testing"
)

func rulesBody(content string) string {
	b, _ := json.Marshal(map[string]any{"rules": map[string]any{"files": []any{map[string]any{"name": "firestore.rules", "content": content}}}})
	return string(b)
}

func TestEmulatorSecurityRules(t *testing.T) {
	t.Parallel()
	ts, s := startREST(t)
	open := "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    function unused(x) { return x; }\n    match /{doc=**} { allow read, write: if unusedVar == 1 || true; }\n  }\n}\n"
	for _, path := range []string{"/emulator/v1/projects/p:securityRules", "/emulator/v1/projects/p/databases/(default):securityRules"} {
		r := do(t, ts, "PUT", path, rulesBody(open), "")
		if r.status != 200 {
			t.Fatalf("PUT %s: %d %s", path, r.status, r.body)
		}
		var got rulesResponse
		if err := json.Unmarshal([]byte(r.body), &got); err != nil {
			t.Fatal(err)
		}
		// The official emulator answers exactly this first issue for this source.
		want := rulesIssue{SourcePosition: sourcePosition{FileName: "firestore.rules", Line: 4, Column: 14, CurrentOffset: 102, EndOffset: 107},
			Description: "Unused function: unused.", Severity: "WARNING"}
		if len(got.Issues) != 2 || got.Issues[0] != want {
			t.Errorf("issues = %+v, want %+v first", got.Issues, want)
		}
		for _, is := range got.Issues {
			if is.Severity != "WARNING" || is.SourcePosition.FileName != "firestore.rules" || is.SourcePosition.Line == 0 ||
				is.SourcePosition.EndOffset < is.SourcePosition.CurrentOffset || is.Description == "" {
				t.Errorf("issue %+v", is)
			}
		}
		if _, text, _ := s.Rules().Source(); text != open {
			t.Errorf("rules not installed")
		}
		r = do(t, ts, "GET", path, "", "")
		if r.status != 200 || !strings.Contains(r.body, `"content": "rules_version`) || !strings.Contains(r.body, `"name": "firestore.rules"`) {
			t.Errorf("GET %s: %d %s", path, r.status, r.body)
		}
	}
	// The rules are live: an anonymous read is allowed now.
	if r := do(t, ts, "GET", docs+"/any/doc", "", ""); r.status != 404 {
		t.Errorf("read under open rules: %d %s", r.status, r.body)
	}

	bad := []struct{ name, body, msg string }{
		{"compile error", rulesBody("service cloud.firestore { match /a { allow read: if ; } }"), "Error compiling rules:\nL1:"},
		{"no files", `{"rules":{"files":[]}}`, "rules.files is empty"},
		{"no rules", `{}`, "rules.files is empty"},
		{"two files", `{"rules":{"files":[{"content":"a"},{"content":"b"}]}}`, "2 files"},
		{"not JSON", `rules_version = '2';`, "Invalid JSON payload"},
	}
	for _, c := range bad {
		r := do(t, ts, "PUT", "/emulator/v1/projects/p:securityRules", c.body, "")
		st, msg, _ := r.err(t)
		if r.status != 400 || st != "INVALID_ARGUMENT" || !strings.Contains(msg, c.msg) {
			t.Errorf("%s: %d %s %q", c.name, r.status, st, msg)
		}
	}
	if _, text, _ := s.Rules().Source(); text != open {
		t.Errorf("a bad PUT replaced the live rules")
	}
}

func TestEmulatorClearData(t *testing.T) {
	t.Parallel()
	ts, _ := startREST(t)
	write := func(db, path string) {
		r := do(t, ts, "PATCH", "/v1/projects/p/databases/"+db+"/documents/"+path, `{"fields":{}}`, owner)
		if r.status != 200 {
			t.Fatalf("write %s: %d %s", path, r.status, r.body)
		}
	}
	exists := func(db, path string) bool {
		return do(t, ts, "GET", "/v1/projects/p/databases/"+db+"/documents/"+path, "", owner).status == 200
	}
	for _, p := range []string{"a/1", "a/1/sub/x", "b/2", "ab/3"} {
		write("(default)", p)
	}
	write("other", "a/1")

	// A subtree.
	r := do(t, ts, "DELETE", "/emulator/v1/projects/p/databases/(default)/documents/a/1", "", "")
	if r.status != 200 || strings.TrimSpace(r.body) != "{}" {
		t.Fatalf("clear subtree: %d %s", r.status, r.body)
	}
	if exists("(default)", "a/1") || exists("(default)", "a/1/sub/x") || !exists("(default)", "b/2") || !exists("(default)", "ab/3") {
		t.Errorf("subtree clear removed the wrong documents")
	}
	// bulkDelete of a collection group.
	if r := do(t, ts, "POST", "/emulator/v1/projects/p:bulkDelete", `{"collectionIds":["b"]}`, ""); r.status != 200 {
		t.Fatalf("bulkDelete: %d %s", r.status, r.body)
	}
	if exists("(default)", "b/2") || !exists("(default)", "ab/3") {
		t.Errorf("bulkDelete removed the wrong documents")
	}
	// A whole database, not the others.
	if r := do(t, ts, "DELETE", "/emulator/v1/projects/p/databases/(default)/documents", "", ""); r.status != 200 {
		t.Fatalf("clear: %d %s", r.status, r.body)
	}
	if exists("(default)", "ab/3") || !exists("other", "a/1") {
		t.Errorf("clear removed the wrong documents")
	}
	if r := do(t, ts, "POST", "/emulator/v1/projects/p:bulkDelete", `{"collectionIds":`, ""); r.status != 400 {
		t.Errorf("bad bulkDelete body: %d %s", r.status, r.body)
	}
}

func TestEmulatorUnknownEndpoints(t *testing.T) {
	t.Parallel()
	ts, _ := startREST(t)
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/emulator/v1/projects/p:export", 501},
		{"POST", "/emulator/v1/projects/p:import", 501},
		{"GET", "/emulator/v1/projects/p:nothing", 404},
		{"GET", "/emulator/v1/nothing", 404},
		{"GET", "/emulator/v1/projects/p/databases/d/other", 404},
		{"POST", "/emulator/v1/projects/p:securityRules", 404},
	} {
		r := do(t, ts, c.method, c.path, "", "")
		if r.status != c.status {
			t.Errorf("%s %s: %d %s", c.method, c.path, r.status, r.body)
		}
		r.err(t)
	}
}
