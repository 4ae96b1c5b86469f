// Package lsp_test drives the built `pyric lsp` with a real LSP client:
// vscode-languageserver-protocol, the library VS Code's language clients
// are built on (npm, pinned in package-lock.json here), through open →
// edit → diagnostics → hover → completion → definition → rename →
// code action → formatting for Firestore and Storage rules, and the same but
// formatting for database rules (whose JSON is left as written), in a two-folder workspace whose
// firebase.json files name the rules files.
package lsp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/e2etest"
)

const firestoreRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    function isOwner(uid) {
      return request.auth != null && request.auth.uid == uid;
    }
    match /users/{uid} {
      // Owners only.
      allow read: if isOwner(uid) && uid.lower() == uid;
      allow write: if isOwner(uid) && request.resource.data.keys().hasOnly(['name']);
    }
  }
}
`

const storageRules = `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    function isOwner(uid) {
      return request.auth != null && request.auth.uid == uid;
    }
    match /users/{uid}/{file} {
      // Owners only.
      allow read: if isOwner(uid) && uid.lower() == uid;
      allow write: if isOwner(uid) && request.resource.size < 1024 * 1024;
    }
  }
}
`

const databaseRules = `{
  "rules": {
    "users": {
      "$uid": {
        ".read": "auth != null && auth.uid === $uid",
        ".write": "auth != null && auth.uid === $uid"
      }
    }
  }
}
`

// messy is a canonical source re-indented with tabs and trailing blanks,
// which formatting must undo.
func messy(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\n  ", "\n\t"), ";\n", ";   \n")
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestVSCodeProtocolClient(t *testing.T) {
	if _, err := os.Stat(filepath.Join(e2etest.Root(), "e2e", "lsp", "node_modules", "vscode-languageserver-protocol", "package.json")); err != nil {
		e2etest.Missing(t, "vscode-languageserver-protocol is not installed (cd e2e/lsp && npm ci): %v", err)
	}
	bin := e2etest.Pyric(t)
	a, b := t.TempDir(), t.TempDir()
	// A names its rules files in firebase.json: db.json is database rules
	// only because of it.
	write(t, filepath.Join(a, "firebase.json"), `{"firestore": {"rules": "app.rules"}, "database": {"rules": "db.json"}}`)
	write(t, filepath.Join(a, "app.rules"), messy(firestoreRules))
	write(t, filepath.Join(a, "db.json"), databaseRules)
	write(t, filepath.Join(b, "firebase.json"), `{"storage": {"rules": "storage.rules"}}`)
	write(t, filepath.Join(b, "storage.rules"), messy(storageRules))

	steps := e2etest.RunSteps(t, 2*time.Minute, filepath.Join(e2etest.Root(), "e2e", "lsp"), "client.cjs",
		"PYRIC="+bin, "WORKSPACE_A="+a, "WORKSPACE_B="+b)
	want := map[string]string{
		"initialize": `{"sync": 2, "hover": true, "rename": true}`,
		"shutdown":   `0`,
		// An unknown name inside a rule string and a JSON syntax error,
		// each at its position (line 4, zero-based, is the .read rule;
		// character 34 is auht inside its string, 53 the second comma).
		"database open":       `[]`,
		"database edit":       `{"unknown": [{"code": "UNKNOWN_IDENTIFIER", "severity": 1, "line": 4, "character": 34}], "badJSON": [{"code": "INVALID_RULES_JSON", "severity": 1, "line": 4, "character": 53}]}`,
		"database formatting": `[]`,
		"database hover":      "[\"```\\nauth: object or null\\n```\\nThe signed-in user: uid, provider and token (the ID token's claims); null when unauthenticated.\", \"```\\n$uid: string\\n```\\nThe key matched at `/users/$uid`.\"]",
		"database completion": `{"auth": ["provider", "token", "uid"], "hasUid": true, "hasNewData": true}`,
		// The "$uid" key (line 3, after the quote) declares the variable.
		"database definition": `[{"line": 3, "character": 7}]`,
		"database rename":     `[[3, 7, "$user"], [4, 47, "$user"], [5, 48, "$user"]]`,
	}
	for _, lang := range []struct{ name, canon, methodDoc string }{
		{"firestore", firestoreRules, "The string in lower case."},
		{"storage", storageRules, "The string in lower case."},
	} {
		q := func(s string) string { return `"` + strings.NewReplacer(`"`, `\"`, "\n", `\n`).Replace(s) + `"` }
		want[lang.name+" open"] = `[]`
		// The parse error is at the second == of the function's return
		// line (4, zero-based; the file is indented with a tab).
		want[lang.name+" edit"] = `{"broken": [{"code": "PARSE_ERROR", "severity": 1, "line": 4, "character": 56}], "fixed": []}`
		want[lang.name+" hover"] = q("```\n(string).lower()\n```\n" + lang.methodDoc)
		want[lang.name+" completion"] = `{"lower": true, "matches": true, "keys": false}`
		want[lang.name+" definition"] = `[{"line": 3, "character": 12}]`
		want[lang.name+" rename"] = `[3, 8, 9]`
		want[lang.name+" formatting"] = q(lang.canon)
		// The read rule is line 8 (zero-based); `length` starts at
		// character 62 of it.
		want[lang.name+" code action"] = `{"actions": [["quickfix", "write ` + "`uid.size()`" + `", ["LENGTH_PROPERTY"]]], "edit": [8, 62, 68, "size()"], "after": []}`
	}
	want["firestore symbols"] = `["service cloud.firestore", "match /databases/{database}/documents", "isOwner", "match /users/{uid}", "allow read", "allow write"]`
	want["storage symbols"] = `["service firebase.storage", "match /b/{bucket}/o", "isOwner", "match /users/{uid}/{file}", "allow read", "allow write"]`
	e2etest.CheckSteps(t, steps, e2etest.Want{Steps: want, Listed: true})
}
