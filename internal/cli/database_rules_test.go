package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs a pyric command line with the given stdin and returns the
// exit code, stdout and stderr.
func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, Stdio{In: strings.NewReader(stdin), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const cliRules = `{
  "rules": {
    "users": {
      "$uid": {
        ".read": "auth != null",
        ".write": "auth !== null && auth.uid === $uid",
        "name": { ".validate": "newData.isString()" }
      }
    }
  }
}`

func simulateInputJSON(t *testing.T, rules any, cases ...map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"source": rules, "testCases": cases})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var (
	ownWrite = map[string]any{"description": "own write", "expectation": "ALLOW", "operation": "write",
		"path": "/users/alice", "auth": map[string]any{"uid": "alice", "provider": "anonymous"}, "newData": map[string]any{"name": "A"}}
	badName = map[string]any{"description": "bad name", "expectation": "DENY", "operation": "write",
		"path": "/users/alice", "auth": map[string]any{"uid": "alice"}, "newData": map[string]any{"name": 1}}
	anonRead = map[string]any{"description": "anon read", "expectation": "DENY", "operation": "read",
		"path": "/users/bob", "auth": nil, "data": map[string]any{"users": map[string]any{"bob": map[string]any{"name": "B"}}}}
	wrongExpectation = map[string]any{"description": "wrong", "expectation": "ALLOW", "operation": "read", "path": "/users/bob"}
)

type simulateOutput struct {
	Success bool `json:"success"`
	Data    struct {
		Passed, Failed, Unsupported int
		Results                     []struct {
			Description, Expectation, Decision, State string
			Deciding                                  int
			Trace                                     []struct {
				MatchPath  string   `json:"matchPath"`
				Operations []string `json:"operations"`
				Verdict    string   `json:"verdict"`
				Line       int      `json:"line"`
				Column     int      `json:"column"`
				Condition  string   `json:"condition"`
			}
			Notes []string
		}
	} `json:"data"`
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Line    int    `json:"line"`
		Column  int    `json:"column"`
	} `json:"error"`
}

func decodeSimulate(t *testing.T, out string) simulateOutput {
	t.Helper()
	var s simulateOutput
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	return s
}

func TestDatabaseRulesSimulateJSON(t *testing.T) {
	t.Parallel()
	code, out, errOut := runCLI(t, simulateInputJSON(t, cliRules, ownWrite, badName, anonRead),
		"database", "rules", "simulate", "--stdin", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s\n%s", code, errOut, out)
	}
	s := decodeSimulate(t, out)
	if !s.Success || s.Data.Passed != 3 || s.Data.Failed != 0 || len(s.Data.Results) != 3 {
		t.Fatalf("report = %+v", s)
	}
	r := s.Data.Results[1]
	if r.Decision != "DENY" || r.State != "PASSED" || r.Deciding < 0 {
		t.Errorf("bad name = %+v", r)
	}
	dec := r.Trace[r.Deciding]
	if dec.MatchPath != "/users/$uid/name" || dec.Operations[0] != ".validate" || dec.Line != 7 || dec.Column != 33 || dec.Condition != "newData.isString()" {
		t.Errorf("deciding rule = %+v", dec)
	}
}

func TestDatabaseRulesSimulateFailedCase(t *testing.T) {
	t.Parallel()
	code, out, _ := runCLI(t, simulateInputJSON(t, cliRules, ownWrite, wrongExpectation),
		"database", "rules", "simulate", "--stdin", "--format=json")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	s := decodeSimulate(t, out)
	if !s.Success || s.Data.Passed != 1 || s.Data.Failed != 1 || s.Data.Results[1].State != "FAILED" {
		t.Errorf("report = %+v", s)
	}
}

func TestDatabaseRulesSimulateText(t *testing.T) {
	t.Parallel()
	code, out, _ := runCLI(t, simulateInputJSON(t, cliRules, ownWrite, wrongExpectation),
		"database", "rules", "simulate", "--stdin", "--format", "text")
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, want := range []string{"PASS own write", "FAIL wrong", "expected ALLOW, got DENY", "database.rules.json:6:20", "1 passed, 1 failed, 0 unsupported"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
}

func TestDatabaseRulesSimulateRulesAlias(t *testing.T) {
	t.Parallel()
	// "rules" as an alias of "source", given as a string or as the JSON tree.
	var tree any
	if err := json.Unmarshal([]byte(cliRules), &tree); err != nil {
		t.Fatal(err)
	}
	for _, rules := range []any{cliRules, tree} {
		b, _ := json.Marshal(map[string]any{"rules": rules, "testCases": []any{ownWrite}})
		code, out, _ := runCLI(t, string(b), "database", "rules", "simulate", "--stdin", "--format", "json")
		if code != 0 || !decodeSimulate(t, out).Success {
			t.Errorf("rules %T: exit %d\n%s", rules, code, out)
		}
	}
}

func TestDatabaseRulesSimulateCompileError(t *testing.T) {
	t.Parallel()
	bad := "{\n  \"rules\": {\n    \".read\": \"newData.val()['kind'] === 1\"\n  }\n}"
	code, out, _ := runCLI(t, simulateInputJSON(t, bad, ownWrite), "database", "rules", "simulate", "--stdin", "--format", "json")
	if code != 2 {
		t.Fatalf("exit %d, want 2\n%s", code, out)
	}
	s := decodeSimulate(t, out)
	if s.Success || s.Error.Code != "NEWDATA_IN_READ" || s.Error.Line != 3 || s.Error.Column != 15 || s.Error.Message == "" {
		t.Errorf("error = %+v", s.Error)
	}
	code, out, errOut := runCLI(t, simulateInputJSON(t, `{"rules": {".read": "auth !="}}`, ownWrite), "database", "rules", "simulate", "--stdin", "--format", "text")
	if code != 2 || !strings.Contains(out, "PARSE_ERROR") || !strings.Contains(errOut, "^") {
		t.Errorf("text compile error: exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestDatabaseRulesSimulateBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, stdin, msg string }{
		{"not json", "nope", "not a JSON object"},
		{"no source", `{"testCases": []}`, `missing "source"`},
		{"no cases", `{"source": "{\"rules\": {}}"}`, `missing "testCases"`},
		{"bad operation", simulateInputJSON(t, cliRules, map[string]any{"expectation": "ALLOW", "operation": "update", "path": "/a"}), "testCases[0].operation"},
		{"bad expectation", simulateInputJSON(t, cliRules, map[string]any{"expectation": "MAYBE", "operation": "read", "path": "/a"}), "testCases[0].expectation"},
		{"no path", simulateInputJSON(t, cliRules, ownWrite, map[string]any{"expectation": "DENY", "operation": "read"}), "testCases[1].path"},
		{"bad auth", simulateInputJSON(t, cliRules, map[string]any{"expectation": "DENY", "operation": "read", "path": "/", "auth": "alice"}), "testCases[0].auth"},
		{"bad now", simulateInputJSON(t, cliRules, map[string]any{"expectation": "DENY", "operation": "read", "path": "/", "now": "yesterday"}), "testCases[0].now"},
	}
	for _, tt := range tests {
		code, out, _ := runCLI(t, tt.stdin, "database", "rules", "simulate", "--stdin", "--format", "json")
		s := decodeSimulate(t, out)
		if code != 2 || s.Success || s.Error.Code != "INVALID_INPUT" || !strings.Contains(s.Error.Message, tt.msg) {
			t.Errorf("%s: exit %d, error %+v; want INVALID_INPUT mentioning %q", tt.name, code, s.Error, tt.msg)
		}
	}
	if code, _, errOut := runCLI(t, "", "database", "rules", "simulate"); code != 2 || !strings.Contains(errOut, "usage") {
		t.Errorf("without --stdin: exit %d, stderr %q", code, errOut)
	}
}

func TestDatabaseRulesSimulateNowAndClaims(t *testing.T) {
	t.Parallel()
	rules := `{"rules": {".read": "now === 1700000000000 && auth.token.firebase.sign_in_provider === 'anonymous' && auth.token.sub === auth.uid"}}`
	for _, now := range []any{1700000000000, "2023-11-14T22:13:20Z"} {
		c := map[string]any{"description": "d", "expectation": "ALLOW", "operation": "read", "path": "/",
			"auth": map[string]any{"uid": "u1", "provider": "anonymous"}, "now": now}
		code, out, _ := runCLI(t, simulateInputJSON(t, rules, c), "database", "rules", "simulate", "--stdin", "--format", "json")
		if code != 0 {
			t.Errorf("now %v: exit %d\n%s", now, code, out)
		}
	}
}

func TestDatabaseRulesValidate(t *testing.T) {
	t.Parallel()
	good := writeFile(t, "database.rules.json", cliRules)
	code, out, _ := runCLI(t, "", "database", "rules", "validate", good)
	if code != 0 || !strings.Contains(out, "rules compile") {
		t.Errorf("good rules: exit %d\n%s", code, out)
	}
	bad := writeFile(t, "database.rules.json", "{\n  \"rules\": {\n    \".write\": \"data.chld('x').exists()\"\n  }\n}\n")
	code, out, _ = runCLI(t, "", "database", "rules", "validate", bad)
	want := bad + ":3:21: error: No such method/property 'chld' on a snapshot [UNKNOWN_METHOD]\n" +
		"        \".write\": \"data.chld('x').exists()\"\n" +
		"                        ^^^^\n" +
		"    fix: did you mean `child`?\n"
	if code != 2 || out != want {
		t.Errorf("bad rules: exit %d\n%s\nwant\n%s", code, out, want)
	}
	if code, _, errOut := runCLI(t, "", "database", "rules", "validate", filepath.Join(t.TempDir(), "missing.json")); code != 2 || errOut == "" {
		t.Errorf("missing file: exit %d, stderr %q", code, errOut)
	}
	if code, _, _ := runCLI(t, "", "database", "rules", "validate"); code != 2 {
		t.Errorf("no path: exit %d", code)
	}
}

func TestDatabaseRulesLint(t *testing.T) {
	t.Parallel()
	warnOnly := writeFile(t, "warn.json", `{"rules": {".read": true, "a": {".write": "newData.val() == 1"}}}`)
	withError := writeFile(t, "err.json", `{"rules": {".read": "newData.exists()"}}`)
	notJSON := writeFile(t, "bad.json", `{"rules": {".read": true,}}`)
	clean := writeFile(t, "clean.json", cliRules)

	code, out, _ := runCLI(t, "", "database", "rules", "lint", warnOnly, "--format", "text")
	if code != 0 || !strings.Contains(out, "[HARDCODED_TRUE]") || !strings.Contains(out, "fix: use `===`") {
		t.Errorf("warnings only: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "", "database", "rules", "lint", clean, "--format", "text")
	if code != 0 || !strings.Contains(out, "no problems found") {
		t.Errorf("clean: exit %d\n%s", code, out)
	}

	code, out, _ = runCLI(t, "", "database", "rules", "lint", "--format", "json", withError)
	if code != 1 {
		t.Errorf("error: exit %d, want 1\n%s", code, out)
	}
	var js struct {
		Diagnostics []struct {
			Code, Severity, Message, Fix     string
			Line, Column, EndLine, EndColumn int
		}
		Metrics map[string]int
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if len(js.Diagnostics) != 1 || js.Diagnostics[0].Code != "NEWDATA_IN_READ" || js.Diagnostics[0].Severity != "error" ||
		js.Diagnostics[0].Line != 1 || js.Diagnostics[0].Column != 22 || js.Diagnostics[0].EndColumn != 29 || js.Metrics["rules"] != 1 {
		t.Errorf("json = %+v", js)
	}

	code, out, _ = runCLI(t, "", "database", "rules", "lint", notJSON, "--format", "json")
	if code != 2 || !strings.Contains(out, "INVALID_RULES_JSON") {
		t.Errorf("invalid JSON: exit %d, want 2\n%s", code, out)
	}
	if code, _, _ := runCLI(t, "", "database", "rules", "lint", filepath.Join(t.TempDir(), "missing.json")); code != 2 {
		t.Errorf("missing file: exit %d", code)
	}
	if code, _, _ := runCLI(t, "", "database", "rules", "lint", clean, "--format", "xml"); code != 2 {
		t.Errorf("bad format: exit %d", code)
	}
}

func TestDatabaseRulesLintSARIF(t *testing.T) {
	t.Parallel()
	p := writeFile(t, "database.rules.json", `{"rules": {".read": "newData.exists()", "a": {".write": "newData.val() == 1"}}}`)
	code, out, _ := runCLI(t, "", "database", "rules", "lint", p, "--format", "sarif")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	log := decodeSARIF(t, out)
	run := log.Runs[0]
	if run.Tool.Driver.Name == "" || len(run.Tool.Driver.Rules) != 2 || len(run.Results) != 2 {
		t.Fatalf("sarif run = %+v", run)
	}
	for _, r := range run.Tool.Driver.Rules {
		if r.ShortDescription.Text == "" || r.ShortDescription.Text == r.ID {
			t.Errorf("rule %s has no description", r.ID)
		}
	}
	levels := map[string]string{}
	for _, r := range run.Results {
		levels[r.RuleID] = r.Level
		loc := r.Locations[0].PhysicalLocation
		if loc.ArtifactLocation.URI != p || loc.Region.StartLine != 1 || loc.Region.StartColumn < 1 || loc.Region.EndColumn <= loc.Region.StartColumn || r.Message.Text == "" {
			t.Errorf("result = %+v", r)
		}
	}
	if levels["NEWDATA_IN_READ"] != "error" || levels["LOOSE_EQUALITY"] != "warning" {
		t.Errorf("levels = %v", levels)
	}
}
