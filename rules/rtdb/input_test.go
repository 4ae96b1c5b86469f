package rtdb

import (
	"strings"
	"testing"
)

func TestParseInput(t *testing.T) {
	in, err := ParseInput([]byte(`{"source": {"rules": {".read": "auth != null"}}, "testCases": [
		{"expectation": "ALLOW", "operation": "read", "path": "/a", "auth": {"uid": "u", "provider": "password"}, "now": 1700000000000},
		{"expectation": "deny", "operation": "write", "path": "/b", "newData": 1, "now": "2026-01-01T00:00:00Z"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(in.Source, `".read"`) || len(in.TestCases) != 2 || in.Name != "database.rules.json" {
		t.Fatalf("input = %+v", in)
	}
	a := in.TestCases[0].Auth
	if a == nil || a.Token["sub"] != "u" || a.Token["firebase"].(map[string]any)["sign_in_provider"] != "password" {
		t.Fatalf("auth = %+v", a)
	}
	if in.TestCases[0].Now.UnixMilli() != 1700000000000 || in.TestCases[1].Now.Year() != 2026 || in.TestCases[1].Operation != Write {
		t.Fatalf("cases = %+v", in.TestCases)
	}
	q, err := ParseInput([]byte(`{"source": {"rules": {".read": "query.orderByChild === 'owner' && query.equalTo === 'u' && query.limitToFirst <= 10"}}, "testCases": [
		{"expectation": "ALLOW", "operation": "read", "path": "/", "query": {"orderByChild": "owner", "equalTo": "u", "limitToFirst": 10}},
		{"expectation": "DENY", "operation": "read", "path": "/", "query": {"orderByChild": "owner", "equalTo": "u", "limitToFirst": 11}},
		{"expectation": "DENY", "operation": "read", "path": "/"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	rs := mustCompile(t, q.Source)
	if rep := rs.Simulate(q.TestCases); rep.Passed != 3 {
		t.Fatalf("query cases: %+v", rep)
	}
	files, err := ParseInput([]byte(`{"source": {"files": [{"name": "db.json", "content": "{\"rules\": {}}"}]}, "testCases": []}`))
	if err != nil || files.Name != "db.json" || files.Source != `{"rules": {}}` {
		t.Fatalf("files form: %+v %v", files, err)
	}
	for _, tc := range []struct{ in, want string }{
		{`[]`, "not a JSON object"},
		{`{"testCases": []}`, `missing "source"`},
		{`{"source": 1, "testCases": []}`, `"source" must be`},
		{`{"source": "{}"}`, `missing "testCases"`},
		{`{"source": "{}", "testCases": [{"expectation": "ALLOW", "operation": "get", "path": "/"}]}`, "testCases[0].operation: want read or write"},
		{`{"source": "{}", "testCases": [{"expectation": "MAYBE", "operation": "read", "path": "/"}]}`, "testCases[0].expectation"},
		{`{"source": "{}", "testCases": [{"expectation": "ALLOW", "operation": "read"}]}`, "testCases[0].path: missing"},
		{`{"source": "{}", "testCases": [{"expectation": "ALLOW", "operation": "read", "path": "/", "now": "yesterday"}]}`, "testCases[0].now"},
		{`{"source": "{}", "testCases": [{"expectation": "ALLOW", "operation": "read", "path": "/", "auth": 3}]}`, "testCases[0].auth"},
		{`{"source": "{}", "testCases": [{"expectation": "ALLOW", "operation": "write", "path": "/", "query": {}}]}`, "testCases[0].query: only a read"},
		{`{"source": "{}", "testCases": [{"expectation": "ALLOW", "operation": "read", "path": "/", "query": {"limitToLast": 1.5}}]}`, "testCases[0].query.limitToLast"},
	} {
		if _, err := ParseInput([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.in, err, tc.want)
		}
	}
}

func FuzzParseInput(f *testing.F) {
	f.Add([]byte(`{"source": "{}", "testCases": [{"expectation": "ALLOW", "operation": "read", "path": "/", "auth": {"uid": "u"}}]}`))
	f.Add([]byte(`{"source": {"files": [{"name": "a", "content": "{}"}]}, "testCases": []}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := ParseInput(b)
		if err == nil && in == nil {
			t.Fatal("nil input without an error")
		}
	})
}
