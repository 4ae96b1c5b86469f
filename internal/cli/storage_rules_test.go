package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

const storageCLIRules = `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /users/{uid}/{file} {
      allow read: if request.auth != null && request.auth.uid == uid;
      allow create: if request.auth.uid == uid
        && request.resource.size < 1024 * 1024
        && request.resource.contentType.matches('image/.*');
      allow delete: if firestore.get(/databases/(default)/documents/users/$(uid)).data.admin == true;
    }
  }
}
`

var (
	storageOwnRead = map[string]any{"description": "own read", "expectation": "ALLOW", "method": "get",
		"path": "users/alice/a.png", "auth": map[string]any{"uid": "alice"}, "existingResource": map[string]any{"size": 10}}
	storageBigUpload = map[string]any{"description": "too big", "expectation": "DENY", "method": "create",
		"path": "users/alice/a.png", "auth": map[string]any{"uid": "alice"},
		"resource": map[string]any{"size": 2 * 1024 * 1024, "contentType": "image/png"}}
	storageAdminDelete = map[string]any{"description": "admin delete", "expectation": "ALLOW", "method": "delete",
		"path": "users/alice/a.png", "existingResource": map[string]any{"size": 10},
		"functionMocks": []any{map[string]any{"function": "firestore.get", "path": "users/alice", "result": map[string]any{"admin": true}}}}
	storageAnonRead = map[string]any{"description": "anonymous read", "expectation": "ALLOW", "method": "get",
		"path": "users/alice/a.png", "existingResource": map[string]any{"size": 10}}
)

func TestStorageRulesSimulateJSON(t *testing.T) {
	t.Parallel()
	code, out, errOut := runCLI(t, simulateInputJSON(t, storageCLIRules, storageOwnRead, storageBigUpload, storageAdminDelete),
		"storage", "rules", "simulate", "--stdin", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s\n%s", code, errOut, out)
	}
	s := decodeSimulate(t, out)
	if !s.Success || s.Data.Passed != 3 || s.Data.Failed != 0 || len(s.Data.Results) != 3 {
		t.Fatalf("report = %+v", s)
	}
	r := s.Data.Results[1]
	if r.Decision != "DENY" || r.State != "PASSED" || r.Deciding != 0 {
		t.Fatalf("too big = %+v", r)
	}
	dec := r.Trace[r.Deciding]
	if dec.MatchPath != "/b/{bucket}/o/users/{uid}/{file}" || dec.Operations[0] != "create" || dec.Verdict != "DENY" ||
		dec.Line != 6 || dec.Column != 7 || !strings.HasPrefix(dec.Condition, "request.auth.uid == uid && request.resource.size") {
		t.Errorf("deciding rule = %+v", dec)
	}
	if got := s.Data.Results[2].Notes; len(got) != 1 || got[0] != "Allowed by match block '/b/{bucket}/o/users/{uid}/{file}'" {
		t.Errorf("admin delete notes = %q", got)
	}
	// The per-rule expression trace is part of the JSON.
	var raw struct {
		Data struct {
			Results []struct {
				Trace []struct {
					Expressions []struct {
						Source string `json:"source"`
						Depth  int    `json:"depth"`
						Value  string `json:"value"`
					} `json:"expressions"`
				} `json:"trace"`
			} `json:"results"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	if e := raw.Data.Results[1].Trace[0].Expressions; len(e) == 0 || e[0].Depth != 0 || e[0].Value != "false" {
		t.Errorf("expression trace = %+v", e)
	}
}

func TestStorageRulesSimulateFailedCase(t *testing.T) {
	t.Parallel()
	code, out, _ := runCLI(t, simulateInputJSON(t, storageCLIRules, storageOwnRead, storageAnonRead),
		"storage", "rules", "simulate", "--stdin", "--format=json")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	s := decodeSimulate(t, out)
	r := s.Data.Results[1]
	if !s.Success || s.Data.Passed != 1 || s.Data.Failed != 1 || r.State != "FAILED" || r.Decision != "DENY" {
		t.Fatalf("report = %+v", s)
	}
	// The Rules Test API leaves request.auth unbound for an anonymous
	// caller: production's error note, with its position.
	if len(r.Notes) != 2 || r.Notes[0] != "Error: storage.rules line [5], column [22]. Property auth is undefined on object." ||
		!strings.HasPrefix(r.Notes[1], "Hint: in Rules Test API mode an unauthenticated request has no request.auth") {
		t.Errorf("notes = %q", r.Notes)
	}
	if r.Trace[0].Verdict != "ERROR" {
		t.Errorf("trace = %+v", r.Trace)
	}
}

func TestStorageRulesSimulateText(t *testing.T) {
	t.Parallel()
	code, out, _ := runCLI(t, simulateInputJSON(t, storageCLIRules, storageOwnRead, storageAnonRead),
		"storage", "rules", "simulate", "--stdin", "--format", "text")
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"PASS own read",
		"FAIL anonymous read",
		"expected ALLOW, got DENY",
		"decided by allow read in match /b/{bucket}/o/users/{uid}/{file} → ERROR",
		"storage.rules:5:7",
		"note: Error: storage.rules line [5], column [22]. Property auth is undefined on object.",
		"1 passed, 1 failed, 0 unsupported",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
}

func TestStorageRulesSimulateRulesAlias(t *testing.T) {
	t.Parallel()
	b, _ := json.Marshal(map[string]any{"rules": storageCLIRules, "testCases": []any{storageOwnRead}})
	code, out, _ := runCLI(t, string(b), "storage", "rules", "simulate", "--stdin", "--format", "json")
	if code != 0 || !decodeSimulate(t, out).Success {
		t.Errorf("exit %d\n%s", code, out)
	}
	// An empty case list is a valid run with nothing to fail.
	b, _ = json.Marshal(map[string]any{"source": storageCLIRules, "testCases": []any{}})
	code, out, _ = runCLI(t, string(b), "storage", "rules", "simulate", "--stdin", "--format", "json")
	if s := decodeSimulate(t, out); code != 0 || !s.Success || s.Data.Results == nil {
		t.Errorf("no cases: exit %d\n%s", code, out)
	}
}

func TestStorageRulesSimulateCompileError(t *testing.T) {
	t.Parallel()
	bad := "service firebase.storage {\n  match /b/{bucket}/o/{f} {\n    allow read: if firestore.get(/databases/(default)/documents/a/b, 2) != null;\n  }\n}\n"
	code, out, _ := runCLI(t, simulateInputJSON(t, bad, storageOwnRead), "storage", "rules", "simulate", "--stdin", "--format", "json")
	if code != 2 {
		t.Fatalf("exit %d, want 2\n%s", code, out)
	}
	s := decodeSimulate(t, out)
	if s.Success || s.Error.Code != "ARGUMENT_COUNT" || s.Error.Line != 3 || s.Error.Column != 20 ||
		s.Error.Message != "Incorrect number of arguments supplied to function: firestore.get." {
		t.Errorf("error = %+v", s.Error)
	}
	code, out, errOut := runCLI(t, simulateInputJSON(t, "service firebase.storage { match /b/{x}/o { allow read: if ; } }", storageOwnRead),
		"storage", "rules", "simulate", "--stdin", "--format", "text")
	if code != 2 || !strings.Contains(out, "error: ") || !strings.Contains(out, "[PARSE_ERROR]") || !strings.Contains(errOut, "^") {
		t.Errorf("text compile error: exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestStorageRulesSimulateBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, stdin, msg string }{
		{"not json", "nope", "not valid JSON"},
		{"no source", `{"testCases": []}`, `missing "source"`},
		{"no cases", `{"source": "service firebase.storage {}"}`, `no testCases`},
		{"umbrella method", simulateInputJSON(t, storageCLIRules, map[string]any{"method": "write", "path": "a"}), "testCases[0].method"},
		{"bad expectation", simulateInputJSON(t, storageCLIRules, map[string]any{"expectation": "MAYBE", "method": "get", "path": "a"}), "testCases[0].expectation"},
		{"no path", simulateInputJSON(t, storageCLIRules, storageOwnRead, map[string]any{"method": "get"}), "testCases[1].path"},
		{"bad object", simulateInputJSON(t, storageCLIRules, map[string]any{"method": "get", "path": "a", "existingResource": map[string]any{"timeUpdated": "2026-01-01T00:00:00Z"}}),
			"testCases[0].existingResource.timeUpdated: not a property of a Storage object: the last-update time is updated"},
		{"bad time", simulateInputJSON(t, storageCLIRules, map[string]any{"method": "get", "path": "a", "requestTime": "noon"}), "testCases[0].requestTime"},
	}
	for _, tt := range tests {
		code, out, _ := runCLI(t, tt.stdin, "storage", "rules", "simulate", "--stdin", "--format", "json")
		s := decodeSimulate(t, out)
		if code != 2 || s.Success || s.Error.Code != "INVALID_INPUT" || !strings.Contains(s.Error.Message, tt.msg) {
			t.Errorf("%s: exit %d, error %+v; want INVALID_INPUT mentioning %q", tt.name, code, s.Error, tt.msg)
		}
	}
	code, out, _ := runCLI(t, "nope", "storage", "rules", "simulate", "--stdin", "--format", "text")
	if code != 2 || !strings.HasPrefix(out, "error: input is not valid JSON") || !strings.Contains(out, "[INVALID_INPUT]") {
		t.Errorf("text bad input: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCLI(t, "", "storage", "rules", "simulate"); code != 2 || !strings.Contains(errOut, "usage") {
		t.Errorf("without --stdin: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "{}", "storage", "rules", "simulate", "--stdin", "--format", "xml"); code != 2 || !strings.Contains(errOut, "unknown --format") {
		t.Errorf("bad format: exit %d, stderr %q", code, errOut)
	}
}

func TestStorageRulesValidate(t *testing.T) {
	t.Parallel()
	good := writeFile(t, "storage.rules", storageCLIRules)
	code, out, _ := runCLI(t, "", "storage", "rules", "validate", good)
	if code != 0 || out != good+": rules compile\n" {
		t.Errorf("good rules: exit %d\n%s", code, out)
	}
	bad := writeFile(t, "storage.rules", "rules_version = '2';\nservice firebase.storage {\n  match /b/{bucket}/o/{f} {\n    allow read: if request.resource.contentType.matches('(');\n  }\n}\n")
	code, out, _ = runCLI(t, "", "storage", "rules", "validate", bad)
	want := bad + ":4:57: error: Invalid regular expression pattern. Pattern: (. [INVALID_REGEX]\n" +
		"        allow read: if request.resource.contentType.matches('(');\n" +
		"                                                            ^^^\n"
	if code != 2 || !strings.HasPrefix(out, want) {
		t.Errorf("bad rules: exit %d\n%s\nwant prefix\n%s", code, out, want)
	}
	warn := writeFile(t, "storage.rules", "rules_version = '2';\nservice firebase.storage {\n  match /b/{bucket}/o/{f} {\n    allow read: if firestore.fetch(/databases/(default)/documents/a/b);\n  }\n}\n")
	code, out, _ = runCLI(t, "", "storage", "rules", "validate", warn)
	if code != 0 || !strings.Contains(out, ":4:30: warning: Invalid function name: firestore.fetch.") {
		t.Errorf("warning: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCLI(t, "", "storage", "rules", "validate", filepath.Join(t.TempDir(), "missing.rules")); code != 2 || errOut == "" {
		t.Errorf("missing file: exit %d, stderr %q", code, errOut)
	}
	if code, _, _ := runCLI(t, "", "storage", "rules", "validate"); code != 2 {
		t.Errorf("no path: exit %d", code)
	}
}
