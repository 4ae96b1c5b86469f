package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const ownerRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /users/{uid} {
      allow read: if request.auth != null && request.auth.uid == uid;
      allow create: if request.auth.uid == uid && request.resource.data.name is string;
    }
  }
}`

func firestoreInput(t *testing.T, cases ...map[string]any) string {
	b, err := json.Marshal(map[string]any{"source": ownerRules, "testCases": cases})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFirestoreSimulateJSON(t *testing.T) {
	in := firestoreInput(t,
		map[string]any{"description": "owner reads", "expectation": "ALLOW", "method": "get", "path": "users/alice", "auth": map[string]any{"uid": "alice"}, "resource": map[string]any{"name": "A"}},
		map[string]any{"description": "stranger reads", "expectation": "DENY", "method": "get", "path": "users/alice", "auth": map[string]any{"uid": "bob"}, "resource": map[string]any{"name": "A"}},
		map[string]any{"description": "bad name type", "expectation": "DENY", "method": "create", "path": "users/alice", "auth": map[string]any{"uid": "alice"}, "data": map[string]any{"name": 5}},
	)
	code, out, errOut := runCLI(t, in, "firestore", "rules", "simulate", "--stdin", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s, out %s", code, errOut, out)
	}
	var res struct {
		Success bool
		Data    struct {
			Passed, Failed int
			Results        []struct {
				Description, Decision, State string
				Trace                        []struct {
					Verdict     string
					Line        int
					Expressions []struct{ Source, Value string }
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if !res.Success || res.Data.Passed != 3 || res.Data.Failed != 0 {
		t.Fatalf("result: %s", out)
	}
	tr := res.Data.Results[1].Trace
	if len(tr) != 1 || tr[0].Verdict != "DENY" || tr[0].Line != 5 || len(tr[0].Expressions) == 0 {
		t.Errorf("stranger trace = %+v", tr)
	}
}

func TestFirestoreSimulateExitCodes(t *testing.T) {
	failing := firestoreInput(t, map[string]any{"description": "wrong", "expectation": "ALLOW", "method": "get", "path": "users/alice"})
	if code, out, _ := runCLI(t, failing, "firestore", "rules", "simulate", "--stdin", "--format=json"); code != 1 || !strings.Contains(out, `"failed": 1`) {
		t.Errorf("failing case: exit %d, %s", code, out)
	}
	bad, _ := json.Marshal(map[string]any{"source": "service cloud.firestore { match /a { allow read: if ; } }", "testCases": []any{}})
	code, out, _ := runCLI(t, string(bad), "firestore", "rules", "simulate", "--stdin", "--format=json")
	if code != 2 || !strings.Contains(out, `"success": false`) || !strings.Contains(out, `"line": 1`) {
		t.Errorf("compile error: exit %d, %s", code, out)
	}
	if code, out, _ := runCLI(t, "{not json", "firestore", "rules", "simulate", "--stdin", "--format=json"); code != 2 || !strings.Contains(out, "INVALID_INPUT") {
		t.Errorf("bad json: exit %d, %s", code, out)
	}
	badCase := firestoreInput(t, map[string]any{"description": "x", "expectation": "ALLOW", "method": "fetch", "path": "users/a"})
	if code, out, _ := runCLI(t, badCase, "firestore", "rules", "simulate", "--stdin", "--format=json"); code != 2 || !strings.Contains(out, "testCases[0].method") {
		t.Errorf("bad case: exit %d, %s", code, out)
	}
	if code, _, errOut := runCLI(t, "", "firestore", "rules", "simulate"); code != 2 || !strings.Contains(errOut, "usage") {
		t.Errorf("no --stdin: exit %d %s", code, errOut)
	}
	// rules is an alias of source.
	alias, _ := json.Marshal(map[string]any{"rules": ownerRules, "testCases": []any{map[string]any{"description": "d", "expectation": "DENY", "method": "get", "path": "users/a"}}})
	if code, out, _ := runCLI(t, string(alias), "firestore", "rules", "simulate", "--stdin", "--format=json"); code != 0 {
		t.Errorf("rules alias: exit %d %s", code, out)
	}
}

func TestFirestoreSimulateText(t *testing.T) {
	in := firestoreInput(t, map[string]any{"description": "stranger reads", "expectation": "ALLOW", "method": "get", "path": "users/alice", "auth": map[string]any{"uid": "bob"}, "resource": map[string]any{}})
	code, out, _ := runCLI(t, in, "firestore", "rules", "simulate", "--stdin", "--format", "text")
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"FAIL stranger reads", "expected ALLOW, got DENY", "firestore.rules:5:7", "allow read: if request.auth != null", "0 passed, 1 failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}

func TestFirestoreValidate(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.rules")
	os.WriteFile(good, []byte(ownerRules), 0o644)
	if code, out, _ := runCLI(t, "", "firestore", "rules", "validate", good); code != 0 || !strings.Contains(out, "rules compile") {
		t.Errorf("good: exit %d %s", code, out)
	}
	bad := filepath.Join(dir, "bad.rules")
	os.WriteFile(bad, []byte("rules_version = '2';\nservice cloud.firestore {\n  match /a/{b} {\n    allow read: if x === 1;\n  }\n}\n"), 0o644)
	code, out, _ := runCLI(t, "", "firestore", "rules", "validate", bad)
	if code != 2 || !strings.Contains(out, "bad.rules:4:22: error: '===' is not a rules operator") || !strings.Contains(out, "                     ^^^") {
		t.Errorf("bad: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCLI(t, "", "firestore", "rules", "validate", filepath.Join(dir, "missing.rules")); code != 2 || errOut == "" {
		t.Errorf("missing file: exit %d", code)
	}
}

// TestValidateOutputIsBounded: 8,000 lets in one function on one ~140 KB
// line once printed 2 GB in 41 s; the output is now capped ("and N more")
// and each line clipped around its caret, with the error shown first.
func TestValidateOutputIsBounded(t *testing.T) {
	lets := make([]string, 8000)
	for i := range lets {
		lets[i] = fmt.Sprintf("let v%d = %d;", i, i)
	}
	src := "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    function f() { " +
		strings.Join(lets, " ") + " return true; }\n    match /d/{id} { allow read: if f(); }\n  }\n}\n"
	path := writeFile(t, "lets.rules", src)
	code, out, _ := runCLI(t, "", "firestore", "rules", "validate", path)
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	if len(out) > 64<<10 {
		t.Fatalf("validate printed %d bytes", len(out))
	}
	for _, want := range []string{"LET_LIMIT", "… and ", " more ("} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if len([]rune(l)) > 400 {
			t.Fatalf("a %d-character line was printed", len([]rune(l)))
		}
	}
}

const postRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /posts/{postId} {
      allow create: if request.auth != null && request.resource.data.title is string && request.resource.data.title.size() < 20;
    }
  }
}`

// TestFirestoreSimulateTextPointsAtTheFailingSubexpression: a denied case
// names the sub-expression that failed, with its values and a caret under
// it, not just the allow line; -v adds the full trace.
func TestFirestoreSimulateTextPointsAtTheFailingSubexpression(t *testing.T) {
	title := strings.Repeat("t", 33)
	b, _ := json.Marshal(map[string]any{"source": postRules, "testCases": []any{map[string]any{
		"description": "long title", "expectation": "ALLOW", "method": "create", "path": "posts/p1",
		"auth": map[string]any{"uid": "alice"}, "data": map[string]any{"title": title}}}})
	code, out, _ := runCLI(t, string(b), "firestore", "rules", "simulate", "--stdin", "--format", "text")
	if code != 1 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	src := "request.resource.data.title.size() < 20"
	line := strings.Split(postRules, "\n")[4]
	col := strings.Index(line, src)
	for _, want := range []string{"failing: " + src + "  (firestore.rules:5:" + fmt.Sprint(col+1) + ")", "33 < 20 → false",
		"\n       " + line + "\n       " + strings.Repeat(" ", col) + strings.Repeat("^", len(src)) + "\n", "bindings: database = (default), postId = p1"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "trace of") {
		t.Errorf("the full trace is printed without -v:\n%s", out)
	}
	_, verbose, _ := runCLI(t, string(b), "firestore", "rules", "simulate", "--stdin", "--format", "text", "-v")
	for _, want := range []string{"trace of allow create", "request.auth != null → true", "budget: "} {
		if !strings.Contains(verbose, want) {
			t.Errorf("-v lacks %q:\n%s", want, verbose)
		}
	}
	_, js, _ := runCLI(t, string(b), "firestore", "rules", "simulate", "--stdin", "--format", "json")
	var rep struct {
		Data struct {
			Results []struct {
				Trace []struct {
					Failing []struct {
						Source, Values string
						Line, Column   int
					}
				}
				Bindings map[string]string
				Budget   struct{ Expressions, MaxExpressions int }
			}
		}
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	r := rep.Data.Results[0]
	if len(r.Trace) != 1 || len(r.Trace[0].Failing) != 1 || r.Trace[0].Failing[0].Source != src || r.Trace[0].Failing[0].Values != "33 < 20 → false" ||
		r.Bindings["postId"] != "p1" || r.Budget.Expressions == 0 || r.Budget.MaxExpressions != 1000 {
		t.Errorf("JSON report lacks the structure: %+v", r)
	}
}

// TestFirestoreSimulateAcceptsTheRulesTestAPIShape runs a suite written
// for the hosted Rules Test API (projects.test) unchanged.
func TestFirestoreSimulateAcceptsTheRulesTestAPIShape(t *testing.T) {
	rules := `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /posts/{id} {
      allow read: if get(/databases/$(database)/documents/users/$(request.auth.uid)).data.role == 'admin' || resource.data.public == true;
      allow create: if request.resource.data.title.size() < 20 && request.time > timestamp.date(2020, 1, 1);
    }
  }
}`
	admin := map[string]any{"function": "get", "args": []any{map[string]any{"exactValue": "/databases/(default)/documents/users/alice"}},
		"result": map[string]any{"value": map[string]any{"data": map[string]any{"role": "admin"}}}}
	in := map[string]any{
		"source": map[string]any{"files": []any{map[string]any{"name": "posts.rules", "content": rules}}},
		"testSuite": map[string]any{"testCases": []any{
			map[string]any{"expectation": "ALLOW", "request": map[string]any{"auth": map[string]any{"uid": "alice"}, "method": "get", "path": "/databases/(default)/documents/posts/p1", "time": "2026-01-01T00:00:00Z"},
				"resource": map[string]any{"data": map[string]any{"public": false}}, "functionMocks": []any{admin}},
			map[string]any{"expectation": "ALLOW", "request": map[string]any{"auth": map[string]any{"uid": "bob"}, "method": "get", "path": "/databases/(default)/documents/posts/p1"},
				"resource": map[string]any{"data": map[string]any{"public": true}}},
			map[string]any{"expectation": "DENY", "request": map[string]any{"auth": map[string]any{"uid": "bob"}, "method": "create", "path": "/databases/(default)/documents/posts/p2",
				"time": "2026-01-01T00:00:00Z", "resource": map[string]any{"data": map[string]any{"title": strings.Repeat("x", 25)}}}},
			map[string]any{"expectation": "ALLOW", "request": map[string]any{"auth": map[string]any{"uid": "bob"}, "method": "create", "path": "/databases/(default)/documents/posts/p2",
				"time": "2026-01-01T00:00:00Z", "resource": map[string]any{"data": map[string]any{"title": "short"}}}},
		}},
	}
	b, _ := json.Marshal(in)
	code, out, errOut := runCLI(t, string(b), "firestore", "rules", "simulate", "--stdin", "--format", "text")
	if code != 0 || !strings.Contains(out, "4 passed, 0 failed") {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
	bad := strings.Replace(string(b), `"exactValue"`, `"anyValue"`, 1)
	code, out, _ = runCLI(t, bad, "firestore", "rules", "simulate", "--stdin", "--format", "json")
	if code != 2 || !strings.Contains(out, "testSuite.testCases[0].functionMocks[0].args[0]: only exactValue") {
		t.Errorf("anyValue mock: exit %d %s", code, out)
	}
}
