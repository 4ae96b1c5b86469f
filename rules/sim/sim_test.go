package sim

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pyric/pyric/rules/source"
)

func TestReportCountsAndExitCode(t *testing.T) {
	var r Report
	r.Add(NewCase("a", Allow, Allow, nil, nil, -1))
	if r.ExitCode() != 0 || r.Passed != 1 {
		t.Fatalf("after a pass: %+v", r)
	}
	r.Add(NewCase("b", Allow, Unsupported, nil, nil, -1))
	if r.ExitCode() != 0 || r.Unsupported != 1 {
		t.Fatalf("unsupported must not fail: %+v", r)
	}
	r.Add(NewCase("c", Allow, Deny, nil, nil, -1))
	if r.ExitCode() != 1 || r.Failed != 1 {
		t.Fatalf("after a failure: %+v", r)
	}
}

func TestWriteJSONEnvelope(t *testing.T) {
	var r Report
	r.Add(NewCase("a", Deny, Deny, nil, nil, -1))
	var buf bytes.Buffer
	if err := WriteJSON(&buf, &r); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Success bool
		Data    struct {
			Passed  int
			Results []struct {
				Description, Decision, State string
				Trace                        []any
				Notes                        []string
			}
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if !out.Success || out.Data.Passed != 1 || out.Data.Results[0].State != "PASSED" || out.Data.Results[0].Trace == nil || out.Data.Results[0].Notes == nil {
		t.Errorf("envelope = %s", buf.String())
	}
}

func TestWriteTextShowsDecidingLine(t *testing.T) {
	f := source.NewFile("firestore.rules", "line one\n  allow read: if false;\n")
	var r Report
	r.Add(NewCase("reads are denied", Allow, Deny, []Rule{{MatchPath: "/a/{b}", Operations: []string{"read"}, Verdict: VerdictDeny, Line: 2, Column: 3}}, []string{"n"}, 0))
	r.Add(NewCase("rtdb", Deny, Deny, []Rule{{MatchPath: "/users/$uid", Operations: []string{".write"}, Verdict: VerdictDeny}}, nil, 0))
	var buf bytes.Buffer
	WriteText(&buf, f, &r)
	out := buf.String()
	for _, want := range []string{"FAIL reads are denied", "expected ALLOW, got DENY", "allow read in match /a/{b} → DENY", "firestore.rules:2:3", "  allow read: if false;", "  ^", "note: n", ".write at /users/$uid", "1 passed, 1 failed, 0 unsupported"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
}
