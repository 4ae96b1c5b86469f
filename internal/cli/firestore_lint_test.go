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

// lintCLI runs pyric with args and returns the exit code, stdout and stderr.
func lintCLI(t *testing.T, terminal bool, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(context.Background(), args, Stdio{In: strings.NewReader(""), Out: &out, Err: &errOut, Terminal: terminal})
	return code, out.String(), errOut.String()
}

// lintFiles writes name → text files into a temporary directory and
// returns their paths.
func lintFiles(t *testing.T, files map[string]string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	paths := map[string]string{}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		paths[name] = p
	}
	return paths
}

const lintGoodRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /users/{userId} {
      allow read: if request.auth != null && request.auth.uid == userId;
      allow write: if request.auth != null && request.auth.uid == userId
        && request.resource.data.keys().hasOnly(['name']);
    }
  }
}
`

// lintBadRules has an error (request.uid) and a warning (a write that is
// always true).
const lintBadRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /users/{userId} {
      allow read: if request.uid == userId;
      allow create: if true;
    }
  }
}
`

type lintJSON struct {
	Diagnostics []struct {
		Code      string `json:"code"`
		Severity  string `json:"severity"`
		Message   string `json:"message"`
		Line      int    `json:"line"`
		Column    int    `json:"column"`
		EndLine   int    `json:"endLine"`
		EndColumn int    `json:"endColumn"`
		Fix       string `json:"fix"`
	} `json:"diagnostics"`
	Metrics map[string]int `json:"metrics"`
}

func decodeLintJSON(t *testing.T, out string) lintJSON {
	t.Helper()
	var v lintJSON
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("output is not the lint JSON shape: %v\n%s", err, out)
	}
	return v
}

func TestFirestoreRulesLintJSON(t *testing.T) {
	t.Parallel()
	p := lintFiles(t, map[string]string{"bad.rules": lintBadRules})
	code, out, stderr := lintCLI(t, false, "firestore", "rules", "lint", p["bad.rules"], "--format", "json")
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr %s", code, stderr)
	}
	v := decodeLintJSON(t, out)
	byCode := map[string]int{}
	for i, d := range v.Diagnostics {
		byCode[d.Code] = i
		if d.Message == "" || d.Line < 1 || d.Column < 1 || d.EndLine < d.Line || d.EndLine == d.Line && d.EndColumn <= d.Column {
			t.Errorf("malformed diagnostic %+v", d)
		}
	}
	i, ok := byCode["WRONG_CONTEXT_PATH"]
	if !ok {
		t.Fatalf("no WRONG_CONTEXT_PATH in %s", out)
	}
	d := v.Diagnostics[i]
	if d.Severity != "error" || d.Line != 5 || d.Column != 22 || d.EndLine != 5 || d.EndColumn != 33 || d.Fix != "did you mean `request.auth.uid`?" {
		t.Errorf("WRONG_CONTEXT_PATH = %+v", d)
	}
	if d := v.Diagnostics[byCode["PERMISSIVE_RULE"]]; d.Code != "PERMISSIVE_RULE" || d.Severity != "warning" || d.Line != 6 {
		t.Errorf("PERMISSIVE_RULE = %+v", d)
	}
	if v.Metrics["allowRuleCount"] != 2 || v.Metrics["sourceSize"] != len(lintBadRules) {
		t.Errorf("metrics = %v", v.Metrics)
	}
}

func TestFirestoreRulesLintText(t *testing.T) {
	t.Parallel()
	p := lintFiles(t, map[string]string{"good.rules": lintGoodRules, "bad.rules": lintBadRules})
	// On a terminal text is the default.
	code, out, _ := lintCLI(t, true, "firestore", "rules", "lint", p["good.rules"])
	if code != 0 || !strings.Contains(out, "no problems found") {
		t.Errorf("clean file: exit %d, output %q", code, out)
	}
	code, out, _ = lintCLI(t, false, "firestore", "rules", "lint", "--format=text", p["bad.rules"])
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	want := p["bad.rules"] + ":5:22: error: `request.uid` does not exist"
	if !strings.Contains(out, want) || !strings.Contains(out, "[WRONG_CONTEXT_PATH]") {
		t.Errorf("text output lacks %q:\n%s", want, out)
	}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, p["bad.rules"]+":5:22:") {
			if i+3 >= len(lines) || strings.TrimSpace(lines[i+1]) != "allow read: if request.uid == userId;" ||
				strings.TrimSpace(lines[i+2]) != "^^^^^^^^^^^" || lines[i+3] != "    fix: did you mean `request.auth.uid`?" {
				t.Errorf("source line, caret and fix missing:\n%s", strings.Join(lines[i:min(i+4, len(lines))], "\n"))
			}
		}
	}
}

func TestFirestoreRulesLintSARIF(t *testing.T) {
	t.Parallel()
	p := lintFiles(t, map[string]string{"bad.rules": lintBadRules})
	code, out, _ := lintCLI(t, false, "firestore", "rules", "lint", p["bad.rules"], "--format", "sarif")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	log := decodeSARIF(t, out)
	run := log.Runs[0]
	if run.Tool.Driver.Name != "pyric firestore rules lint" || len(run.Tool.Driver.Rules) == 0 {
		t.Errorf("driver = %+v", run.Tool.Driver)
	}
	rules := map[string]bool{}
	for _, r := range run.Tool.Driver.Rules {
		if r.ID == "" || r.ShortDescription.Text == "" || r.ShortDescription.Text == r.ID {
			t.Errorf("rule without a description: %+v", r)
		}
		rules[r.ID] = true
	}
	if len(run.Results) < 2 {
		t.Fatalf("results = %+v", run.Results)
	}
	for _, r := range run.Results {
		if !rules[r.RuleID] {
			t.Errorf("result %s has no rule in the driver", r.RuleID)
		}
		switch r.Level {
		case "error", "warning", "note":
		default:
			t.Errorf("level %q", r.Level)
		}
		if len(r.Locations) != 1 || r.Locations[0].PhysicalLocation.ArtifactLocation.URI != p["bad.rules"] ||
			r.Locations[0].PhysicalLocation.Region.StartLine < 1 || r.Locations[0].PhysicalLocation.Region.StartColumn < 1 {
			t.Errorf("locations = %+v", r.Locations)
		}
		if r.Message.Text == "" || len(r.Fixes) != 1 || r.Fixes[0].Description.Text == "" {
			t.Errorf("result %s: message %q fixes %+v", r.RuleID, r.Message.Text, r.Fixes)
		}
	}
}

func TestRulesLintExitCodes(t *testing.T) {
	t.Parallel()
	p := lintFiles(t, map[string]string{
		"good.rules":    lintGoodRules,
		"warn.rules":    strings.Replace(lintGoodRules, "allow read: if request.auth != null && request.auth.uid == userId;", "allow create: if true;", 1),
		"bad.rules":     lintBadRules,
		"js.rules":      strings.Replace(lintGoodRules, "request.auth.uid == userId;", "request.auth.uid === userId;", 1),
		"cases.json":    `[{"description": "d", "method": "get", "path": "users/a"}]`,
		"notcases.json": `{"cases": 1}`,
	})
	missing := filepath.Join(t.TempDir(), "missing.rules")
	for _, tc := range []struct {
		name string
		args []string
		want int
		out  string // substring of stdout
		err  string // substring of stderr
	}{
		{"clean", []string{p["good.rules"]}, 0, "", ""},
		{"warnings only", []string{p["warn.rules"]}, 0, "PERMISSIVE_RULE", ""},
		{"an error", []string{p["bad.rules"]}, 1, "WRONG_CONTEXT_PATH", ""},
		{"does not parse", []string{p["js.rules"]}, 2, "INVALID_OPERATOR", ""},
		{"unreadable", []string{missing}, 2, "", "missing.rules"},
		{"no path", nil, 2, "", "usage: pyric firestore rules lint PATH"},
		{"two paths", []string{p["good.rules"], p["bad.rules"]}, 2, "", "usage"},
		{"unknown format", []string{p["good.rules"], "--format", "xml"}, 2, "", "unknown --format"},
		{"unknown flag", []string{p["good.rules"], "--nope"}, 2, "", "nope"},
		{"unreadable previous", []string{p["good.rules"], "--previous", missing}, 2, "", "--previous"},
		{"unreadable tests", []string{p["good.rules"], "--tests", missing}, 2, "", "--tests"},
		{"malformed tests", []string{p["good.rules"], "--tests", p["notcases.json"]}, 2, "", "--tests"},
		{"previous", []string{p["good.rules"], "--previous", p["bad.rules"]}, 0, "RULES_WEAKENED", ""},
	} {
		args := append([]string{"firestore", "rules", "lint"}, tc.args...)
		args = append(args, "--format", "json")
		if tc.name == "unknown format" {
			args = args[:len(args)-2]
		}
		code, out, stderr := lintCLI(t, false, args...)
		if code != tc.want || !strings.Contains(out, tc.out) || !strings.Contains(stderr, tc.err) {
			t.Errorf("%s: exit %d (want %d)\nstdout %s\nstderr %s", tc.name, code, tc.want, out, stderr)
		}
	}
	// The parse failure still prints its diagnostics, with the operator's fix.
	_, out, _ := lintCLI(t, false, "firestore", "rules", "lint", p["js.rules"], "--format", "json")
	v := decodeLintJSON(t, out)
	if len(v.Diagnostics) != 1 || v.Diagnostics[0].Code != "INVALID_OPERATOR" || v.Diagnostics[0].Fix != "replace `===` with `==`" {
		t.Errorf("parse failure output = %+v", v.Diagnostics)
	}
}

func TestRulesLintTests(t *testing.T) {
	t.Parallel()
	rules := strings.Replace(lintGoodRules, "request.auth.uid == userId;", "request.auth.uid == userId && request.time < resource.data.until;", 1)
	p := lintFiles(t, map[string]string{
		"r.rules":    rules,
		"list.json":  `[{"description": "reads", "method": "get", "path": "users/a"}]`,
		"input.json": `{"source": "", "testCases": [{"description": "reads", "method": "get", "path": "users/a"}, {"description": "pinned", "method": "get", "path": "users/a", "requestTime": "2026-01-01T00:00:00Z"}]}`,
	})
	for _, cases := range []string{"list.json", "input.json"} {
		code, out, stderr := lintCLI(t, false, "firestore", "rules", "lint", p["r.rules"], "--tests", p[cases], "--format", "json")
		v := decodeLintJSON(t, out)
		n := 0
		for _, d := range v.Diagnostics {
			if d.Code == "REQUEST_TIME_NOT_PINNED" {
				n++
				if !strings.Contains(d.Message, `"reads"`) || !strings.Contains(d.Fix, "requestTime") {
					t.Errorf("%+v", d)
				}
			}
		}
		if code != 0 || n != 1 {
			t.Errorf("%s: exit %d, %d REQUEST_TIME_NOT_PINNED; stderr %s\n%s", cases, code, n, stderr, out)
		}
	}
}
