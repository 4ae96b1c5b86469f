package cli

import (
	"strings"
	"testing"
)

const lintStorageRules = `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /uploads/{fileName} {
      allow read: if request.auth != null;
      allow create: if request.auth != null && request.resource.data.size < 1024;
    }
  }
}
`

func TestStorageRulesLint(t *testing.T) {
	t.Parallel()
	clean := strings.Replace(lintStorageRules, "request.resource.data.size", "request.resource.size", 1)
	p := lintFiles(t, map[string]string{
		"bad.rules":   lintStorageRules,
		"clean.rules": clean,
		"get.rules": strings.Replace(clean, "allow read: if request.auth != null;",
			"allow read: if get(/databases/(default)/documents/a/b).data.ok;", 1),
		"cases.json": `[{"description": "upload", "method": "create", "path": "uploads/a.png"}]`,
	})
	code, out, _ := lintCLI(t, false, "storage", "rules", "lint", p["bad.rules"], "--format", "json")
	v := decodeLintJSON(t, out)
	if code != 1 || len(v.Diagnostics) != 1 || v.Diagnostics[0].Code != "WRONG_CONTEXT_PATH" ||
		v.Diagnostics[0].Fix != "did you mean `request.resource.metadata`?" || v.Diagnostics[0].Line != 6 {
		t.Errorf("exit %d: %s", code, out)
	}
	code, out, _ = lintCLI(t, true, "storage", "rules", "lint", p["clean.rules"], "--tests", p["cases.json"])
	if code != 0 || !strings.Contains(out, "no problems found") {
		t.Errorf("clean: exit %d: %s", code, out)
	}
	// Storage has no bare get(): firestore.get() is the fix.
	code, out, _ = lintCLI(t, false, "storage", "rules", "lint", p["get.rules"], "--format", "text")
	if code != 1 || !strings.Contains(out, "[UNDEFINED_FUNCTION]") || !strings.Contains(out, "fix: write `firestore.get(") {
		t.Errorf("get(): exit %d: %s", code, out)
	}
	code, out, _ = lintCLI(t, false, "storage", "rules", "lint", p["bad.rules"], "--format", "sarif")
	if code != 1 || !strings.Contains(out, `"name": "pyric storage rules lint"`) || !strings.Contains(out, `"version": "2.1.0"`) {
		t.Errorf("sarif: exit %d: %s", code, out)
	}
	if code, _, stderr := lintCLI(t, false, "storage", "rules", "lint"); code != 2 || !strings.Contains(stderr, "usage: pyric storage rules lint") {
		t.Errorf("usage: exit %d: %s", code, stderr)
	}
}
