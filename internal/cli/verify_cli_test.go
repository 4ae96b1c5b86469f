package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyBadInput: bad input exits 2 with a message naming the
// problem — rules that do not compile with file:line:column, a fixture
// that is not the schema with the field at fault.
func TestVerifyBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	good := write("f.json", `{"schema":"pyric.verify.fixture.v1","events":[],"services":{}}`)
	broken := write("broken.rules", "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{db}/documents {\n    match /x { allow read: if ; }\n  }\n}\n")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"rules do not compile", []string{"verify", "--fixture", good, "--rules", broken}, []string{"broken.rules:4:"}},
		{"database rules do not compile", []string{"verify", "--fixture", good, "--database-rules", write("db.json", `{"rules": {".read": "auth.uid ==="}}`)}, []string{"db.json"}},
		{"not the schema", []string{"verify", "--fixture", write("bad.json", `{"schema":"pyric.verify.fixture.v2","events":[]}`), "--rules", broken}, []string{"schema", "pyric.verify.fixture.v1"}},
		{"events not an array", []string{"verify", "--fixture", write("bad2.json", `{"schema":"pyric.verify.fixture.v1","events":{}}`)}, []string{"events"}},
		{"not JSON", []string{"verify", "--fixture", write("bad3.json", `{"schema":`)}, []string{"bad3.json"}},
		{"no such fixture", []string{"verify", "--fixture", filepath.Join(dir, "missing.json")}, []string{"missing.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Run(context.Background(), tc.args, Stdio{Out: &out, Err: &errb})
			if code != 2 {
				t.Fatalf("exit %d, want 2\nstdout %s\nstderr %s", code, out.String(), errb.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(errb.String()+out.String(), w) {
					t.Errorf("output lacks %q:\n%s%s", w, out.String(), errb.String())
				}
			}
		})
	}
}
