package firestoreserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/pyric/pyric/rules/coverage"
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
		if _, text, _ := s.Rules().Source("p"); text != open {
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
	if _, text, _ := s.Rules().Source("p"); text != open {
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

// coverageRulesSource is the source the official emulator's coverage report
// below was recorded for.
const coverageRulesSource = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    function unused(x) { return x; }
    function isA() { return request.auth.uid == "a"; }
    match /cities/{c} {
      allow read: if request.auth != null && isA() || resource.data.n > 3;
      allow write: if unusedVar == 1;
    }
  }
}
`

// shape renders a report as line:col:offset-end[children] per node.
func shape(ns []*coverage.Node) string {
	var parts []string
	for _, n := range ns {
		s := fmt.Sprintf("%d:%d:%d-%d", n.SourcePosition.Line, n.SourcePosition.Column, n.SourcePosition.CurrentOffset, n.SourcePosition.EndOffset)
		if len(n.Children) > 0 {
			s += "[" + shape(n.Children) + "]"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ",")
}

func TestEmulatorRuleCoverage(t *testing.T) {
	t.Parallel()
	ts, _ := startREST(t)
	if r := do(t, ts, "PUT", "/emulator/v1/projects/p:securityRules", rulesBody(coverageRulesSource), ""); r.status != 200 {
		t.Fatalf("rules: %d %s", r.status, r.body)
	}
	do(t, ts, "PATCH", docs+"/cities/SF", `{"fields":{"n":{"integerValue":"5"}}}`, owner)
	a := "Bearer " + base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`)) + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"a"}`)) + "."
	do(t, ts, "GET", docs+"/cities/SF", "", "")
	do(t, ts, "GET", docs+"/cities/SF", "", a)
	do(t, ts, "PATCH", docs+"/cities/SF", `{"fields":{}}`, "")

	for _, path := range []string{"/emulator/v1/projects/p:ruleCoverage", "/emulator/v1/projects/p/databases/(default):ruleCoverage"} {
		r := do(t, ts, "GET", path, "", "")
		if r.status != 200 {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
		var rep coverageReport
		if err := json.Unmarshal([]byte(r.body), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Rules == nil || rep.Rules.Files[0].Content != coverageRulesSource {
			t.Errorf("report rules: %+v", rep.Rules)
		}
		// The tree the official emulator reports for this source.
		want := "4:33:121-121," +
			"5:29:154-176[5:29:154-169[5:29:154-165[5:29:154-160]]]," +
			"7:22:226-277[7:22:226-252[7:22:226-245[7:22:226-237[7:22:226-232]],7:46:250-252],7:55:259-277[7:55:259-273[7:55:259-271[7:55:259-266]]]]," +
			"8:23:302-315[8:23:302-310]"
		if got := shape(rep.Report); got != want {
			t.Errorf("report shape\n got %s\nwant %s", got, want)
		}
		vals := func(n *coverage.Node) string {
			var s []string
			for _, v := range n.Values {
				var c bytes.Buffer
				json.Compact(&c, v.Value)
				s = append(s, fmt.Sprintf("%s×%d", c.String(), v.Count))
			}
			return strings.Join(s, " ")
		}
		if len(rep.Report) == 4 {
			if got := vals(rep.Report[1]); got != `{"boolValue":true}×1` {
				t.Errorf("isA body values: %s", got)
			}
			read := rep.Report[2]
			if got := vals(read.Children[0].Children[1]); !strings.Contains(got, `{}×1`) || !strings.Contains(got, `{"boolValue":true}×1`) {
				t.Errorf("isA() call values (skipped once, true once): %s", got)
			}
			if got := vals(read.Children[1].Children[0]); !strings.Contains(got, `{"intValue":"5"}`) {
				t.Errorf("resource.data.n values: %s", got)
			}
			if got := vals(rep.Report[3]); !strings.Contains(got, `"undefined"`) {
				t.Errorf("write condition values: %s", got)
			}
		}
	}
	r := do(t, ts, "GET", "/emulator/v1/projects/p:ruleCoverage.html", "", "")
	if r.status != 200 || !strings.Contains(r.body, "resource.data.n &gt; 3") || !strings.Contains(r.body, "boolValue") {
		t.Errorf("html: %d %.300s", r.status, r.body)
	}
	// New rules start a new report.
	do(t, ts, "PUT", "/emulator/v1/projects/p:securityRules", rulesBody(coverageRulesSource), "")
	r = do(t, ts, "GET", "/emulator/v1/projects/p:ruleCoverage", "", "")
	if strings.Contains(r.body, `"values"`) {
		t.Errorf("counts survived new rules: %s", r.body)
	}
}
